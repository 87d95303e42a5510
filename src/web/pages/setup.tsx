import { useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { ThemeToggle } from '../components/layout';
import { ErrorMessage, Field, Notice } from '../components/ui';
import { useTitle } from '../hooks';
import { SCAN_PROFILES, type Config, type Me, type NetworkDetection, type ScanProfile } from '../types';

type Step = 'account' | 'network' | 'scan';

/** First run: create the admin account, choose the subnet, optionally start the first scan. */
export function SetupPage({ onFinished }: { onFinished: (me: Me) => void }) {
  useTitle('Set up');
  const [step, setStep] = useState<Step>('account');
  const [me, setMe] = useState<Me | null>(null);
  const [subnet, setSubnet] = useState('');
  return (
    <main class="centered">
      <div class="card setup-card">
        <h1>Welcome to Netwarden</h1>
        <ol class="steps" aria-label="Set-up steps">
          <li aria-current={step === 'account' ? 'step' : undefined}>Admin account</li>
          <li aria-current={step === 'network' ? 'step' : undefined}>Network</li>
          <li aria-current={step === 'scan' ? 'step' : undefined}>First scan</li>
        </ol>
        {step === 'account' && (
          <AccountStep
            onCreated={(created) => {
              setMe(created);
              setStep('network');
            }}
          />
        )}
        {step === 'network' && (
          <NetworkStep
            onSaved={(saved) => {
              setSubnet(saved);
              setStep('scan');
            }}
          />
        )}
        {step === 'scan' && me && <FirstScanStep subnet={subnet} onDone={() => onFinished(me)} />}
      </div>
      <ThemeToggle />
    </main>
  );
}

function AccountStep({ onCreated }: { onCreated: (me: Me) => void }) {
  const [username, setUsername] = useState('admin');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (password !== confirm) {
      setError(new Error('The two passwords differ; type the same password in both fields.'));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api('/api/auth/setup', { method: 'POST', json: { username, password } });
      onCreated(await api<Me>('/api/auth/me'));
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit}>
      <p>Create the administrator account. You will use it to log in to this web interface.</p>
      <ErrorMessage error={error} />
      <Field label="Username" hint="3–64 letters, digits, dots, dashes or underscores.">
        <input name="username" autocomplete="username" required minLength={3} maxLength={64} value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
      </Field>
      <Field label="Password" hint="At least 10 characters.">
        <input
          name="password"
          type="password"
          autocomplete="new-password"
          required
          minLength={10}
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
      </Field>
      <label>
        Confirm password
        <input
          name="confirm"
          type="password"
          autocomplete="new-password"
          required
          value={confirm}
          onInput={(e) => setConfirm(e.currentTarget.value)}
        />
      </label>
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Creating…' : 'Create account'}
      </button>
    </form>
  );
}

function NetworkStep({ onSaved }: { onSaved: (subnet: string) => void }) {
  const [subnet, setSubnet] = useState('');
  const [detected, setDetected] = useState<NetworkDetection | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api<Config>('/api/config').then((config) => setSubnet((s) => s || config.network.subnet), setError);
  }, []);

  const detect = async () => {
    setError(null);
    try {
      const result = await api<NetworkDetection>('/api/network/detect');
      setDetected(result);
      if (result.suggested_subnet) setSubnet(result.suggested_subnet);
    } catch (err) {
      setError(err);
    }
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const config = await api<Config>('/api/config', { method: 'PUT', json: { network: { subnet: subnet.trim() } } });
      onSaved(config.network.subnet);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit}>
      <p>Which network should Netwarden watch? Use the CIDR form, such as 192.168.1.0/24.</p>
      <ErrorMessage error={error} />
      <div class="field">
        <label for="setup-subnet">Subnet</label>
        <span class="input-row">
          <input id="setup-subnet" name="subnet" required value={subnet} onInput={(e) => setSubnet(e.currentTarget.value)} placeholder="192.168.1.0/24" />
          <button type="button" onClick={detect}>
            Detect
          </button>
        </span>
      </div>
      {detected && (
        <Notice>
          {detected.suggested_subnet
            ? `This server is ${detected.local_ip ?? 'on the network'} (${detected.hostname}); suggested subnet ${detected.suggested_subnet}.`
            : 'No network interface with an IPv4 address was found; type the subnet yourself.'}
          {detected.interfaces.length > 1 && (
            <ul class="compact">
              {detected.interfaces.map((i) => (
                <li key={i.name}>
                  <button type="button" class="button-link" onClick={() => setSubnet(i.subnet)}>
                    {i.subnet}
                  </button>{' '}
                  on {i.name} ({i.address})
                </li>
              ))}
            </ul>
          )}
        </Notice>
      )}
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Saving…' : 'Save and continue'}
      </button>
    </form>
  );
}

function FirstScanStep({ subnet, onDone }: { subnet: string; onDone: () => void }) {
  const { route } = useLocation();
  const [profile, setProfile] = useState<ScanProfile>('normal');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const start = async () => {
    setBusy(true);
    setError(null);
    try {
      await api('/api/scan/trigger', { method: 'POST', query: { profile } });
      route('/scan');
      onDone();
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <div>
      <p>
        Everything is ready. Start a first scan of <strong>{subnet}</strong> now to fill the device inventory, or do it later from the
        Scan page.
      </p>
      <ErrorMessage error={error} />
      <Field
        label="Profile"
        hint="quick only finds devices; normal checks the configured ports and identifies services; intensive checks all 65,535 ports with deeper service detection and takes much longer."
      >
        <select value={profile} onChange={(e) => setProfile(e.currentTarget.value as ScanProfile)}>
          {SCAN_PROFILES.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </Field>
      <div class="button-row">
        <button type="button" class="primary" disabled={busy} onClick={start}>
          Start first scan
        </button>
        <button
          type="button"
          onClick={() => {
            route('/');
            onDone();
          }}
        >
          Skip, go to the dashboard
        </button>
      </div>
    </div>
  );
}
