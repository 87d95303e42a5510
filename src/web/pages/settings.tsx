import type { ComponentChildren } from 'preact';
import { useId, useRef, useState } from 'preact/hooks';
import { ApiError, api, apiPage } from '../api';
import { SubnetField } from '../components/subnet-field';
import { Dialog, EmptyState, ErrorMessage, Field, Loading, Notice, PageHeader, Pager, Time } from '../components/ui';
import { formatDateTime, humanize, plural } from '../format';
import { useAction, useResource, useTitle } from '../hooks';
import { SCAN_PROFILES, type ApiKey, type AuditEntry, type Config, type NewApiKey, type ScanProfile, type UpdateCheck } from '../types';
import './settings.css';

type Engine = Config['scanning']['engine'];
const ENGINES: Engine[] = ['auto', 'nmap', 'native'];
const AUDIT_PAGE_SIZE = 25;
const PASSWORD_MIN_LENGTH = 10;

export function SettingsPage() {
  useTitle('Settings');
  const loaded = useResource((signal) => api<Config>('/api/config', { signal }), []);
  // The answer of the last successful PUT wins over the first load.
  const [saved, setSaved] = useState<Config | null>(null);
  const config = saved ?? loaded.data;

  const configOr = (render: (config: Config) => ComponentChildren) =>
    config ? render(config) : loaded.error ? <ErrorMessage error={loaded.error} onRetry={loaded.reload} /> : <Loading label="Loading settings…" />;

  return (
    <div class="settings">
      <PageHeader title="Settings" />
      <Section title="Network and scanning">{configOr((c) => <NetworkSettings config={c} onSaved={setSaved} />)}</Section>
      <Section title="Zones">{configOr((c) => <ZoneSettings zones={c.zones} onSaved={setSaved} />)}</Section>
      <Section title="API keys">
        <ApiKeys />
      </Section>
      <Section title="Password">
        <PasswordChange />
      </Section>
      <Section title="Audit log">
        <AuditLog />
      </Section>
      <Section title="Updates">
        <Updates />
      </Section>
    </div>
  );
}

function Section({ title, children }: { title: string; children: ComponentChildren }) {
  const id = useId();
  return (
    <section class="card" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

// ---------------------------------------------------------------------------------------------
// Network and scanning

interface NetworkForm {
  subnet: string;
  exclude: string;
  portRange: string;
  engine: Engine;
  profile: ScanProfile;
  resolveHostnames: boolean;
  hostTimeout: string;
}

function networkForm(config: Config): NetworkForm {
  return {
    subnet: config.network.subnet,
    // The server stores single addresses as /32 blocks; show them as typed.
    exclude: config.network.exclude.map((e) => e.replace(/\/32$/, '')).join('\n'),
    portRange: config.scanning.port_range,
    engine: config.scanning.engine,
    profile: config.scanning.default_profile,
    resolveHostnames: config.network.resolve_hostnames,
    hostTimeout: String(config.scanning.host_timeout_seconds),
  };
}

/** One entry per line or comma, blanks dropped. */
function parseList(text: string): string[] {
  return text
    .split(/[\n,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** "network.exclude.2: ..." names a position; add the entry itself so it can be found in a long list. */
function withExcludedEntry(error: unknown, exclude: string[]): unknown {
  const index = error instanceof ApiError ? error.detail.match(/^network\.exclude\.(\d+):/)?.[1] : undefined;
  const entry = index === undefined ? undefined : exclude[Number(index)];
  return error instanceof ApiError && entry !== undefined ? new ApiError(error.status, `${error.detail} (entry “${entry}”)`, error.body) : error;
}

function NetworkSettings({ config, onSaved }: { config: Config; onSaved: (config: Config) => void }) {
  const [form, setForm] = useState(() => networkForm(config));
  const [done, setDone] = useState(false);
  const resolveId = useId();

  const update = (patch: Partial<NetworkForm>) => {
    setForm((f) => ({ ...f, ...patch }));
    setDone(false);
  };

  const save = useAction(async () => {
    setDone(false);
    const exclude = parseList(form.exclude);
    const next = await api<Config>('/api/config', {
      method: 'PUT',
      json: {
        network: { subnet: form.subnet.trim(), exclude, resolve_hostnames: form.resolveHostnames },
        scanning: {
          port_range: form.portRange.trim(),
          engine: form.engine,
          default_profile: form.profile,
          host_timeout_seconds: Number(form.hostTimeout),
        },
      },
    }).catch((err: unknown) => {
      throw withExcludedEntry(err, exclude);
    });
    onSaved(next);
    setForm(networkForm(next));
    setDone(true);
  });
  const submit = (event: Event) => {
    event.preventDefault();
    void save.run();
  };

  return (
    <form onSubmit={submit}>
      <SubnetField
        value={form.subnet}
        onChange={(subnet) => update({ subnet })}
        hint="The network to scan, in CIDR form such as 192.168.1.0/24. Detect reads this server's network interfaces."
      />
      <Field label="Excluded addresses" hint="Never scanned. One IPv4 address or CIDR block per line (commas work too), such as 192.168.1.1 or 10.0.0.0/28.">
        <textarea name="exclude" rows={3} value={form.exclude} onInput={(e) => update({ exclude: e.currentTarget.value })} />
      </Field>
      <div class="settings-grid">
        <Field label="Port range" hint="Ports the normal profile checks: 1-1000, or a list such as 22,80,443,8000-8100.">
          <input name="port_range" required value={form.portRange} onInput={(e) => update({ portRange: e.currentTarget.value })} />
        </Field>
        <Field label="Host timeout (seconds)" hint="How long one device may take before the scan moves on (5–3600).">
          <input
            name="host_timeout_seconds"
            type="number"
            inputMode="numeric"
            required
            min={5}
            max={3600}
            step={1}
            value={form.hostTimeout}
            onInput={(e) => update({ hostTimeout: e.currentTarget.value })}
          />
        </Field>
        <Field label="Engine" hint="auto uses nmap when it is installed and the built-in scanner otherwise; native never uses nmap.">
          <select name="engine" value={form.engine} onChange={(e) => update({ engine: e.currentTarget.value as Engine })}>
            {ENGINES.map((engine) => (
              <option key={engine} value={engine}>
                {engine}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Default profile" hint="The profile preselected on the Scan page.">
          <select name="default_profile" value={form.profile} onChange={(e) => update({ profile: e.currentTarget.value as ScanProfile })}>
            {SCAN_PROFILES.map((profile) => (
              <option key={profile} value={profile}>
                {profile}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <div class="field">
        <label class="checkbox">
          <input
            type="checkbox"
            name="resolve_hostnames"
            checked={form.resolveHostnames}
            onChange={(e) => update({ resolveHostnames: e.currentTarget.checked })}
            aria-describedby={resolveId}
          />
          Resolve hostnames
        </label>
        <span id={resolveId} class="hint">
          Look up each device's name in DNS during scans. Slower on networks without local DNS.
        </span>
      </div>
      <ErrorMessage error={save.error} />
      {done && <Notice kind="success">Settings saved.</Notice>}
      <div class="button-row">
        <button type="submit" class="primary" disabled={save.busy}>
          {save.busy ? 'Saving…' : 'Save settings'}
        </button>
      </div>
    </form>
  );
}

// ---------------------------------------------------------------------------------------------
// Zones

function ZoneSettings({ zones, onSaved }: { zones: string[]; onSaved: (config: Config) => void }) {
  const [name, setName] = useState('');
  const [message, setMessage] = useState('');

  const save = useAction(async (next: string[], success: string) => {
    setMessage('');
    onSaved(await api<Config>('/api/config', { method: 'PUT', json: { zones: next } }));
    setMessage(success);
  });

  const add = async (event: Event) => {
    event.preventDefault();
    const zone = name.trim();
    setMessage('');
    if (!zone) {
      save.setError(new Error('Type a name for the new zone first.'));
      return;
    }
    const existing = zones.find((z) => z.toLowerCase() === zone.toLowerCase());
    if (existing) {
      save.setError(new Error(`There is already a zone named “${existing}”.`));
      return;
    }
    if (await save.run([...zones, zone], `Zone “${zone}” added.`)) setName('');
  };

  return (
    <>
      <p class="muted small">
        Zones group devices by role or place, such as Servers or IoT; you choose a device's zone on its page. Removing a zone here leaves
        devices already in it unchanged.
      </p>
      {zones.length === 0 ? (
        <EmptyState title="No zones configured">Add one below to start grouping devices.</EmptyState>
      ) : (
        <ul class="zone-list">
          {zones.map((zone) => (
            <li key={zone}>
              <span>{zone}</span>
              <button
                type="button"
                class="zone-remove"
                aria-label={`Remove ${zone}`}
                title={zones.length === 1 ? 'At least one zone is needed' : `Remove ${zone}`}
                disabled={save.busy || zones.length === 1}
                onClick={() => void save.run(zones.filter((z) => z !== zone), `Zone “${zone}” removed.`)}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      {/* add() reports its failures through `save` (useAction), so its promise has nothing left to say. */}
      <form class="settings-inline-form" onSubmit={(event) => void add(event)}>
        <Field label="New zone">
          <input name="zone" maxLength={40} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <button type="submit" disabled={save.busy}>
          Add zone
        </button>
      </form>
      <ErrorMessage error={save.error} />
      {message && <Notice kind="success">{message}</Notice>}
    </>
  );
}

// ---------------------------------------------------------------------------------------------
// API keys

const EXPIRY_CHOICES: { days: number | null; label: string }[] = [
  { days: null, label: 'Never' },
  { days: 30, label: 'After 30 days' },
  { days: 90, label: 'After 90 days' },
  { days: 365, label: 'After 1 year' },
];

function ApiKeys() {
  const keys = useResource((signal) => api<ApiKey[]>('/api/keys', { signal }), []);
  const [name, setName] = useState('');
  const [expiry, setExpiry] = useState('');
  const [created, setCreated] = useState<NewApiKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [message, setMessage] = useState('');

  const create = useAction(async () => {
    setMessage('');
    if (!name.trim()) throw new Error('Type a name for the key first, such as the script or service that will use it.');
    const json = expiry ? { name: name.trim(), expires_in_days: Number(expiry) } : { name: name.trim() };
    setCreated(await api<NewApiKey>('/api/keys', { method: 'POST', json }));
    setName('');
    keys.reload();
  });
  const submit = (event: Event) => {
    event.preventDefault();
    void create.run();
  };

  return (
    <>
      <p class="muted small">
        Scripts and other tools use an API key instead of a password, sent in the X-API-Key header. Create one key per tool, named after
        it (such as grafana or backup-script), so that you can revoke it alone.
      </p>
      {keys.error && <ErrorMessage error={keys.error} onRetry={keys.reload} />}
      {keys.data ? <KeyTable keys={keys.data} onRevoke={setRevoking} /> : !keys.error && <Loading label="Loading API keys…" />}
      {message && <Notice kind="success">{message}</Notice>}
      <form class="settings-inline-form" onSubmit={submit}>
        <Field label="Key name">
          <input name="key_name" maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field label="Expires">
          <select name="expires_in_days" value={expiry} onChange={(e) => setExpiry(e.currentTarget.value)}>
            {EXPIRY_CHOICES.map((c) => (
              <option key={c.label} value={c.days === null ? '' : String(c.days)}>
                {c.label}
              </option>
            ))}
          </select>
        </Field>
        <button type="submit" class="primary" disabled={create.busy}>
          {create.busy ? 'Creating…' : 'Create key'}
        </button>
      </form>
      <ErrorMessage error={create.error} />

      <Dialog open={created !== null} title="New API key" onClose={() => setCreated(null)}>
        {created && <NewKey created={created} onDone={() => setCreated(null)} />}
      </Dialog>
      <Dialog open={revoking !== null} title="Revoke API key" onClose={() => setRevoking(null)}>
        {revoking && (
          <RevokeKey
            apiKey={revoking}
            onCancel={() => setRevoking(null)}
            onRevoked={() => {
              setMessage(`Key “${revoking.name}” revoked.`);
              setRevoking(null);
              keys.reload();
            }}
          />
        )}
      </Dialog>
    </>
  );
}

function KeyTable({ keys, onRevoke }: { keys: ApiKey[]; onRevoke: (key: ApiKey) => void }) {
  if (keys.length === 0) {
    return <EmptyState title="No API keys yet">Create one below for each script or integration that should use the Netwarden API.</EmptyState>;
  }
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Prefix</th>
            <th scope="col" class="hide-narrow">
              Created
            </th>
            <th scope="col">Last used</th>
            <th scope="col" class="hide-narrow">
              Expires
            </th>
            <th scope="col">Status</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.id}>
              <td class="key-name">{key.name}</td>
              <td>
                <code>{key.prefix}…</code>
              </td>
              <td class="hide-narrow">
                <Time iso={key.created_at} />
              </td>
              <td>{key.last_used_at ? <Time iso={key.last_used_at} /> : <span class="muted">never</span>}</td>
              <td class="hide-narrow">{key.expires_at ? <Time iso={key.expires_at} /> : <span class="muted">never</span>}</td>
              <td>
                <span class={`badge key-${key.status}`}>{key.status}</span>
              </td>
              <td>
                {key.status === 'active' && (
                  <button type="button" class="danger" aria-label={`Revoke ${key.name}`} onClick={() => onRevoke(key)}>
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The new key's only appearance. It lives in this component's props: Done drops it. */
function NewKey({ created, onDone }: { created: NewApiKey; onDone: () => void }) {
  const secretRef = useRef<HTMLElement>(null);
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);

  const copy = async () => {
    try {
      if (!navigator.clipboard) throw new Error('No clipboard access');
      await navigator.clipboard.writeText(created.key);
      setCopied('yes');
    } catch {
      // Browsers allow the clipboard only over HTTPS or on localhost: select the key for a manual copy.
      const secret = secretRef.current;
      const selection = window.getSelection();
      if (secret && selection) {
        selection.removeAllRanges();
        const range = document.createRange();
        range.selectNodeContents(secret);
        selection.addRange(range);
      }
      setCopied('no');
    }
  };

  return (
    <div class="new-key">
      <p>
        Copy the key for “{created.name}” now and store it where the script or tool can read it.{' '}
        <strong>It will not be shown again</strong>: if you lose it, revoke it and create a new one.
      </p>
      <code class="secret" data-testid="new-api-key" ref={secretRef}>
        {created.key}
      </code>
      {created.expires_at && <p class="small muted">It stops working on {formatDateTime(created.expires_at)}.</p>}
      {copied === 'yes' && <Notice kind="success">Copied to the clipboard.</Notice>}
      {copied === 'no' && (
        <Notice kind="warning">
          This browser did not allow copying (it needs HTTPS or localhost). The key is selected: press Ctrl+C (⌘C on a Mac) to copy it.
        </Notice>
      )}
      <div class="button-row">
        {/* copy() catches its own failure and falls back to selecting the key. */}
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
        <button type="button" class="primary" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

function RevokeKey({ apiKey, onCancel, onRevoked }: { apiKey: ApiKey; onCancel: () => void; onRevoked: () => void }) {
  const revoke = useAction(async () => {
    await api(`/api/keys/${apiKey.id}`, { method: 'DELETE' });
    onRevoked();
  });

  return (
    <div>
      <p>
        Scripts and tools using “{apiKey.name}” (<code>{apiKey.prefix}…</code>) stop working at once: their next request is refused. This
        cannot be undone.
      </p>
      <ErrorMessage error={revoke.error} />
      <div class="button-row">
        <button type="button" class="danger" disabled={revoke.busy} onClick={() => void revoke.run()}>
          {revoke.busy ? 'Revoking…' : 'Revoke key'}
        </button>
        <button type="button" autoFocus onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}

// ---------------------------------------------------------------------------------------------
// Password

/** "new_password: must be …" → "New password: must be …", in the words of the form. */
function withFieldLabels(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error;
  const detail = error.detail.replace(/^current_password:/, 'Current password:').replace(/^new_password:/, 'New password:');
  return detail === error.detail ? error : new ApiError(error.status, detail, error.body);
}

function PasswordChange() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const [message, setMessage] = useState('');

  const change = useAction(async () => {
    setMessage('');
    if (next !== confirm) throw new Error('The new passwords differ; type the same new password in both fields.');
    const result = await api<{ sessions_ended: number }>('/api/auth/password', {
      method: 'POST',
      json: { current_password: current, new_password: next },
    }).catch((err: unknown) => {
      throw withFieldLabels(err);
    });
    setCurrent('');
    setNext('');
    setConfirm('');
    setMessage(
      result.sessions_ended > 0
        ? `Password changed. ${plural(result.sessions_ended, 'other session')} ended; log in there again with the new password.`
        : 'Password changed.',
    );
  });
  const submit = (event: Event) => {
    event.preventDefault();
    void change.run();
  };

  return (
    <form class="settings-narrow" onSubmit={submit}>
      <Field label="Current password">
        <input
          name="current_password"
          type="password"
          autocomplete="current-password"
          required
          value={current}
          onInput={(e) => setCurrent(e.currentTarget.value)}
        />
      </Field>
      <Field label="New password" hint={`At least ${PASSWORD_MIN_LENGTH} characters. Your other sessions are logged out.`}>
        <input
          name="new_password"
          type="password"
          autocomplete="new-password"
          required
          minLength={PASSWORD_MIN_LENGTH}
          value={next}
          onInput={(e) => setNext(e.currentTarget.value)}
        />
      </Field>
      <Field label="Confirm new password">
        <input
          name="confirm_password"
          type="password"
          autocomplete="new-password"
          required
          value={confirm}
          onInput={(e) => setConfirm(e.currentTarget.value)}
        />
      </Field>
      <ErrorMessage error={change.error} />
      {message && <Notice kind="success">{message}</Notice>}
      <div class="button-row">
        <button type="submit" class="primary" disabled={change.busy}>
          {change.busy ? 'Changing…' : 'Change password'}
        </button>
      </div>
    </form>
  );
}

// ---------------------------------------------------------------------------------------------
// Audit log

/** "api_key_created" → "API key created". */
function words(value: string): string {
  return humanize(value).replace(/^Api key/, 'API key');
}

function AuditLog() {
  const [action, setAction] = useState('');
  const [offset, setOffset] = useState(0);
  const actions = useResource((signal) => api<string[]>('/api/audit-logs/actions', { signal }), []);
  const entries = useResource(
    (signal) => apiPage<AuditEntry>('/api/audit-logs', { action, limit: AUDIT_PAGE_SIZE, offset }, signal),
    [action, offset],
  );

  return (
    <>
      <div class="filters">
        <Field label="Action">
          <select
            name="action"
            value={action}
            onChange={(e) => {
              setAction(e.currentTarget.value);
              setOffset(0);
            }}
          >
            <option value="">All actions</option>
            {(actions.data ?? []).map((a) => (
              <option key={a} value={a}>
                {words(a)}
              </option>
            ))}
          </select>
        </Field>
        <button type="button" onClick={entries.reload} disabled={entries.loading}>
          Refresh
        </button>
      </div>
      {actions.error && <ErrorMessage error={actions.error} onRetry={actions.reload} />}
      {entries.error && <ErrorMessage error={entries.error} onRetry={entries.reload} />}
      {entries.data ? (
        <AuditTable entries={entries.data.items} filtered={action !== ''} />
      ) : (
        !entries.error && <Loading label="Loading the audit log…" />
      )}
      {entries.data && <Pager total={entries.data.total} limit={AUDIT_PAGE_SIZE} offset={offset} onChange={setOffset} />}
    </>
  );
}

function AuditTable({ entries, filtered }: { entries: AuditEntry[]; filtered: boolean }) {
  if (entries.length === 0) {
    return filtered ? (
      <EmptyState title="No entries for this action">Choose “All actions” to see every entry.</EmptyState>
    ) : (
      <EmptyState title="The audit log is empty">Logins, setting changes, API key changes and scans are recorded here as they happen.</EmptyState>
    );
  }
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Action</th>
            <th scope="col">Actor</th>
            <th scope="col" class="hide-narrow">
              Resource
            </th>
            <th scope="col" class="hide-narrow">
              IP address
            </th>
            <th scope="col">Result</th>
            <th scope="col" class="hide-narrow">
              Details
            </th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => (
            <tr key={entry.id}>
              <td class="nowrap">
                <Time iso={entry.timestamp} />
              </td>
              <td>{words(entry.action)}</td>
              <td>{actorText(entry)}</td>
              <td class="hide-narrow">
                <AuditResource entry={entry} />
              </td>
              <td class="hide-narrow">{entry.ip_address ? <span class="mono">{entry.ip_address}</span> : <span class="muted">—</span>}</td>
              <td>{entry.success ? <span class="badge audit-success">success</span> : <span class="badge audit-failed">failed</span>}</td>
              <td class="hide-narrow audit-details">
                {entry.details !== null && entry.details !== undefined && (
                  <details>
                    <summary>Show</summary>
                    <pre>{JSON.stringify(entry.details, null, 2)}</pre>
                  </details>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function actorText(entry: AuditEntry): string {
  if (entry.actor_type === 'system') return entry.actor ?? 'System';
  if (!entry.actor) return '—';
  return entry.actor_type === 'api_key' ? `${entry.actor} (API key)` : entry.actor;
}

function AuditResource({ entry }: { entry: AuditEntry }) {
  if (!entry.resource_type) return <span class="muted">—</span>;
  const label = words(entry.resource_type);
  if (!entry.resource_id) return <>{label}</>;
  if (entry.resource_type === 'device') return <a href={`/devices/${encodeURIComponent(entry.resource_id)}`}>{`${label} ${entry.resource_id}`}</a>;
  return <>{`${label} ${entry.resource_id}`}</>;
}

// ---------------------------------------------------------------------------------------------
// Updates

/** Only http(s) links from the release feed become clickable. */
function safeUrl(url: string | null): string | null {
  return url && /^https?:\/\//i.test(url) ? url : null;
}

function Updates() {
  // Each "Check now" bumps the count; any count above zero asks the server to bypass its cache.
  const [forced, setForced] = useState(0);
  const check = useResource(
    (signal) => api<UpdateCheck>('/api/updates/check', { query: { force: forced > 0 ? true : undefined }, signal }),
    [forced],
  );
  const data = check.data;
  const releaseUrl = safeUrl(data?.release_url ?? null);

  return (
    <>
      {check.error && <ErrorMessage error={check.error} onRetry={check.reload} />}
      {!data && !check.error && <Loading label="Checking for updates…" />}
      {data && (
        <>
          <dl class="facts">
            <dt>Installed version</dt>
            <dd>{data.current_version}</dd>
            <dt>Latest release</dt>
            <dd>
              {data.latest_version ?? <span class="muted">unknown</span>}
              {data.published_at && <span class="muted"> · published {formatDateTime(data.published_at)}</span>}
            </dd>
            <dt>Last checked</dt>
            <dd>
              <Time iso={data.checked_at} />
            </dd>
          </dl>
          {data.error ? (
            <Notice kind="warning">
              <span class="wrap-anywhere">{data.error}</span>
            </Notice>
          ) : data.update_available ? (
            <Notice kind="warning">
              <span>
                Netwarden {data.latest_version} is available; this server runs {data.current_version}.{' '}
                {releaseUrl && (
                  <a href={releaseUrl} target="_blank" rel="noreferrer noopener">
                    See the release
                  </a>
                )}
              </span>
            </Notice>
          ) : (
            <Notice kind="success">Netwarden is up to date.</Notice>
          )}
          {data.update_available && data.release_notes && (
            <details class="release-notes">
              <summary>Release notes</summary>
              <div>{data.release_notes}</div>
            </details>
          )}
        </>
      )}
      <div class="button-row">
        <button type="button" onClick={() => setForced((n) => n + 1)} disabled={check.loading}>
          {check.loading && data ? 'Checking…' : 'Check now'}
        </button>
      </div>
    </>
  );
}
