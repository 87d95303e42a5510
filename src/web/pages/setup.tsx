import { useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { DEFAULT_SCAN_PROFILE } from '../../core/model.js';
import { PASSWORD_MIN_LENGTH, USERNAME_MAX_LENGTH, USERNAME_MIN_LENGTH } from '../../core/limits.js';
import { answer, api } from '../api';
import { ThemeToggle } from '../components/layout';
import { ProfileSelect } from '../components/profile-select';
import { SubnetField, useSubnetCheck } from '../components/subnet-field';
import { PasswordInput } from '../components/form-parts';
import { ErrorMessage, Field, Loading, Notice } from '../components/ui';
import { submitRunning, useAction, useResource, useTitle } from '../hooks';
import { fieldMessage, unlessField } from '../plain';
import type { Config, Me, ScanProfile } from '../types';

type Step = 'account' | 'network' | 'scan';

/** Where the wizard was after the account step (it survives a reload): whose, and which step. */
const RESUME_KEY = 'netwarden.setup';

/** The step to resume for `me`, when this browser left the wizard after creating that account. */
export function resumeStep(me: Me): 'network' | 'scan' | null {
  try {
    const saved = JSON.parse(localStorage.getItem(RESUME_KEY) ?? 'null') as { username?: unknown; step?: unknown } | null;
    if (saved && saved.username === me.username && (saved.step === 'network' || saved.step === 'scan')) return saved.step;
  } catch {
    // Storage unavailable or garbled: nothing to resume.
  }
  return null;
}

function remember(me: Me, step: Step | null): void {
  try {
    if (step === null || step === 'account') localStorage.removeItem(RESUME_KEY);
    else localStorage.setItem(RESUME_KEY, JSON.stringify({ username: me.username, step }));
  } catch {
    // A browser without storage starts the remaining steps over after a reload.
  }
}

/**
 * First run: create the admin account, choose the subnet, optionally start the first scan. After
 * the account exists a reload comes back to the step it left (`resume`, from resumeStep).
 */
export function SetupPage({ onFinished, resume }: { onFinished: (me: Me) => void; resume?: { me: Me; step: 'network' | 'scan' } }) {
  useTitle('Set up');
  const [step, setStepState] = useState<Step>(resume?.step ?? 'account');
  const [me, setMe] = useState<Me | null>(resume?.me ?? null);
  const [subnet, setSubnet] = useState('');
  const setStep = (next: Step, who: Me | null = me) => {
    if (who) remember(who, next);
    setStepState(next);
  };
  const finish = (who: Me) => {
    remember(who, null);
    onFinished(who);
  };
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
              setStep('network', created);
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
        {step === 'scan' && me && <FirstScanStep subnet={subnet} onDone={() => finish(me)} />}
      </div>
      <ThemeToggle />
    </main>
  );
}

function AccountStep({ onCreated }: { onCreated: (me: Me) => void }) {
  const [username, setUsername] = useState('admin');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  // From another machine the service asks for the one-time code it printed in its log at start-up.
  const [codeRequired, setCodeRequired] = useState(false);
  const [setupCode, setSetupCode] = useState('');
  const create = useAction(async () => {
    if (password !== confirm) throw new Error('The two passwords differ; type the same password in both fields.');
    const body = codeRequired ? { username, password, setup_code: setupCode.trim() } : { username, password };
    await api.POST('/api/auth/setup', { body });
    onCreated(await answer(api.GET('/api/auth/me')));
  });

  useEffect(() => {
    answer(api.GET('/api/auth/status')).then((status) => setCodeRequired(status.setup_code_required), create.setError);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- asks once, on mount
  }, []);
  const submit = submitRunning(create);

  return (
    <form onSubmit={submit}>
      <p>Create the administrator account. You will use it to log in to this web interface.</p>
      <ErrorMessage error={create.error} />
      {codeRequired && (
        <Field
          label="Set-up code"
          hint="Printed by the service when it started (its console and log: “first-run set-up code”). Only someone who can read them can set it up from another machine."
        >
          <input
            name="setup_code"
            autocomplete="one-time-code"
            required
            spellcheck={false}
            placeholder="XXXX-XXXX-XXXX"
            value={setupCode}
            onInput={(e) => setSetupCode(e.currentTarget.value)}
          />
        </Field>
      )}
      <Field label="Username" hint={`${USERNAME_MIN_LENGTH}–${USERNAME_MAX_LENGTH} letters, digits, dots, dashes or underscores.`}>
        <input
          name="username"
          autocomplete="username"
          required
          minLength={USERNAME_MIN_LENGTH}
          maxLength={USERNAME_MAX_LENGTH}
          value={username}
          onInput={(e) => setUsername(e.currentTarget.value)}
        />
      </Field>
      <Field label="Password" hint={`At least ${PASSWORD_MIN_LENGTH} characters.`}>
        <PasswordInput name="password" autocomplete="new-password" minLength={PASSWORD_MIN_LENGTH} value={password} onInput={setPassword} />
      </Field>
      <label>
        Confirm password
        <PasswordInput name="confirm" autocomplete="new-password" value={confirm} onInput={setConfirm} />
      </label>
      <button type="submit" class="primary" disabled={create.busy}>
        {create.busy ? 'Creating…' : 'Create account'}
      </button>
    </form>
  );
}

function NetworkStep({ onSaved }: { onSaved: (subnet: string) => void }) {
  const [subnet, setSubnet] = useState('');
  const [suggested, setSuggested] = useState<{ subnet: string; detail: string } | null>(null);
  const check = useSubnetCheck(subnet);
  const save = useAction(async () => {
    const config = await answer(api.PUT('/api/config', { body: { network: { subnet: subnet.trim() } } }));
    onSaved(config.network.subnet);
  });

  useEffect(() => {
    // A subnet a scan would accept is the starting point (GET /api/network/suggestion): the configured
    // one (NETWARDEN_SUBNET, the config file, or an earlier visit), else the detected local network,
    // else an allowed scan target; never one that shows an error before anything was typed.
    answer(api.GET('/api/network/suggestion')).then(({ subnet: value, detail }) => {
      if (value === null) return;
      setSuggested({ subnet: value, detail });
      setSubnet((s) => s || value);
    }, save.setError);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- loads the suggestion once, on mount
  }, []);

  const submit = submitRunning(save);
  const refused = check !== null && !check.ok;

  return (
    <form onSubmit={submit}>
      <p>Which network should Netwarden watch? Use the CIDR form, such as 192.168.1.0/24.</p>
      <ErrorMessage error={unlessField(save.error, 'network.subnet')} />
      <SubnetField
        value={subnet}
        check={check}
        error={fieldMessage(save.error, 'network.subnet')}
        hint={suggested && suggested.subnet === subnet.trim() ? suggested.detail : undefined}
        onChange={setSubnet}
      />
      <button type="submit" class="primary" disabled={save.busy || refused}>
        {save.busy ? 'Saving…' : 'Save and continue'}
      </button>
    </form>
  );
}

function FirstScanStep({ subnet, onDone }: { subnet: string; onDone: () => void }) {
  const { route } = useLocation();
  const [profile, setProfile] = useState<ScanProfile>(DEFAULT_SCAN_PROFILE);
  // After a reload the subnet saved in the previous step comes from the configuration.
  const config = useResource<Config | null>((signal) => (subnet ? Promise.resolve(null) : answer(api.GET('/api/config', { signal }))), [subnet]);
  const shownSubnet = subnet || config.data?.network.subnet || '';
  // Whether scans can run: a missing nmap (or another engine problem) is said here, not "Everything is ready".
  const health = useResource((signal) => answer(api.GET('/health', { signal })), []);
  const start = useAction(async () => {
    const started = await answer(api.POST('/api/scan/trigger', { params: { query: { profile } } }));
    route(`/scans?scan=${started.scan_id}`);
    onDone();
  });
  const engineProblem = health.data && health.data.status !== 'healthy' ? (health.data.detail ?? 'The scan engine is not ready.') : null;
  const ready = health.data?.status === 'healthy' && !start.error;

  return (
    <div>
      {!health.data && !health.error && <Loading label="Checking the scan engine…" />}
      {health.error !== null && health.error !== undefined && <ErrorMessage error={health.error} onRetry={health.reload} />}
      {engineProblem && (
        <Notice kind="warning">
          <span data-testid="engine-problem">{engineProblem}</span>
        </Notice>
      )}
      <p>
        {ready ? 'Everything is ready. ' : ''}Start a first scan of <strong>{shownSubnet}</strong> now to fill the device inventory, or do it later
        from the Scans page.
      </p>
      <ErrorMessage error={start.error} />
      <ProfileSelect value={profile} onChange={setProfile} />
      <div class="button-row">
        <button type="button" class="primary" disabled={start.busy} onClick={() => void start.run()}>
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
