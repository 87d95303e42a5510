import { useState } from 'preact/hooks';
import { answer, api, page } from '../../api';
import { EmptyState, ErrorMessage, Field, Loading, Pager, TableHead, Time } from '../../components/ui';
import { humanize } from '../../format';
import { useResource } from '../../hooks';
import type { AuditAction, AuditEntry } from '../../types';

const AUDIT_PAGE_SIZE = 25;

/** "api_key_created" → "API key created". */
function words(value: string): string {
  return humanize(value).replace(/^Api key/, 'API key');
}

/** The audit log, newest first, filtered by action and paged. */
export function AuditLog() {
  const [action, setAction] = useState<AuditAction | ''>('');
  const [offset, setOffset] = useState(0);
  const actions = useResource((signal) => answer(api.GET('/api/audit-logs/actions', { signal })), []);
  const entries = useResource(
    (signal) => page(api.GET('/api/audit-logs', { params: { query: { action: action || undefined, limit: AUDIT_PAGE_SIZE, offset } }, signal })),
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
              // The options are the names GET /api/audit-logs/actions gave: the filter's own values.
              setAction(e.currentTarget.value as AuditAction | '');
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
        <TableHead
          columns={['Time', 'Action', 'Actor', 'Resource', 'IP address', 'Result', 'Details']}
          hideNarrow={['Resource', 'IP address', 'Details']}
        />
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
