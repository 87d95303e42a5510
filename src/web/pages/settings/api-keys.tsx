import { useRef, useState } from 'preact/hooks';
import { API_KEY_NAME_MAX_LENGTH } from '../../../core/limits.js';
import { answer, api } from '../../api';
import {
  Dialog,
  EmptyState,
  ErrorMessage,
  Field,
  Loading,
  Notice,
  RevokeButton,
  RevokeDialog,
  TableHead,
  Time,
  useRevoking,
} from '../../components/ui';
import { formatDateTime } from '../../format';
import { submitRunning, useAction, useResource } from '../../hooks';
import type { ApiKey, NewApiKey } from '../../types';

const EXPIRY_CHOICES: { days: number | null; label: string }[] = [
  { days: null, label: 'Never' },
  { days: 30, label: 'After 30 days' },
  { days: 90, label: 'After 90 days' },
  { days: 365, label: 'After 1 year' },
];

/** The API keys: list, create (the key shown once), revoke. */
export function ApiKeys() {
  const keys = useResource((signal) => answer(api.GET('/api/keys', { signal })), []);
  const [name, setName] = useState('');
  const [expiry, setExpiry] = useState('');
  const [created, setCreated] = useState<NewApiKey | null>(null);
  const revoking = useRevoking<ApiKey>((apiKey) => `Key “${apiKey.name}” revoked.`, keys.reload);

  const create = useAction(async () => {
    revoking.setNotice(null);
    if (!name.trim()) throw new Error('Type a name for the key first, such as the script or service that will use it.');
    const body = expiry ? { name: name.trim(), expires_in_days: Number(expiry) } : { name: name.trim() };
    setCreated(await answer(api.POST('/api/keys', { body })));
    setName('');
    keys.reload();
  });
  const submit = submitRunning(create);

  return (
    <>
      <p class="muted small">
        Scripts and other tools use an API key instead of a password, sent in the X-API-Key header. Create one key per tool, named after it (such as
        grafana or backup-script), so that you can revoke it alone.
      </p>
      {keys.error && <ErrorMessage error={keys.error} onRetry={keys.reload} />}
      {keys.data ? <KeyTable keys={keys.data} onRevoke={revoking.ask} /> : !keys.error && <Loading label="Loading API keys…" />}
      {revoking.notice && <Notice kind="success">{revoking.notice}</Notice>}
      <form class="settings-inline-form" onSubmit={submit}>
        <Field label="Key name">
          <input name="key_name" maxLength={API_KEY_NAME_MAX_LENGTH} value={name} onInput={(e) => setName(e.currentTarget.value)} />
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
      <RevokeDialog
        revoking={revoking}
        title="Revoke API key"
        label="Revoke key"
        revoke={(apiKey) => api.DELETE('/api/keys/{key_id}', { params: { path: { key_id: apiKey.id } } })}
      >
        {(apiKey) => (
          <>
            Scripts and tools using “{apiKey.name}” (<code>{apiKey.prefix}…</code>) stop working at once: their next request is refused. This cannot
            be undone.
          </>
        )}
      </RevokeDialog>
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
        <TableHead columns={['Name', 'Prefix', 'Created', 'Last used', 'Expires', 'Status']} hideNarrow={['Created', 'Expires']} actions />
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
              <td>
                <Time iso={key.last_used_at} missing="never" />
              </td>
              <td class="hide-narrow">
                <Time iso={key.expires_at} missing="never" />
              </td>
              <td>
                <span class={`badge key-${key.status}`}>{key.status}</span>
              </td>
              <td>{key.status === 'active' && <RevokeButton name={key.name} onClick={() => onRevoke(key)} />}</td>
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
        Copy the key for “{created.name}” now and store it where the script or tool can read it. <strong>It will not be shown again</strong>: if you
        lose it, revoke it and create a new one.
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
