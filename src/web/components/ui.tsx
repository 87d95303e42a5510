import { cloneElement, type ComponentChildren, type VNode } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { messageOf } from '../api';
import { useAction } from '../hooks';
import { formatAgo, formatDateTime, humanize } from '../format';
import type { Coverage } from '../coverage';
import type { RiskLevel, Severity } from '../types';

/** An API or network error as a readable message, with an optional retry. */
/**
 * A short marker for a device with stale ports (CONTRACT §14): listed as last known, not examined
 * by its latest port scan. The sentence is in the title; the device page has the details.
 */
export function StaleMarker({ count, text: given }: { count: number; text?: string }) {
  if (count <= 0) return null;
  const text = given ?? `${count} ${count === 1 ? 'port' : 'ports'} not examined by the latest scan: shown as last verified`;
  return (
    <span class="stale-marker" role="img" aria-label={text} title={text}>
      ⧗
    </span>
  );
}

export function ErrorMessage({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  if (!error) return null;
  return (
    <div class="alert alert-error" role="alert">
      <span>{messageOf(error)}</span>
      {onRetry && (
        <button type="button" class="button-link" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Notice({ children, kind = 'info' }: { children: ComponentChildren; kind?: 'info' | 'success' | 'warning' }) {
  return (
    <div class={`alert alert-${kind}`} role="status">
      {children}
    </div>
  );
}

/** What an empty list means and what to do next. */
export function EmptyState({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p class="empty-title">{title}</p>
      {children && <div class="empty-body">{children}</div>}
    </div>
  );
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p class="loading" role="status" aria-live="polite">
      {label}
    </p>
  );
}

/**
 * A device's risk level. "No risk" says what it covers when `coverage` is known: "No finding in
 * ports 1–1000" (examined when: in the title), or "No finding · ports not scanned" when no scan has
 * examined its ports (see coverage.ts). `compact` (list rows) leaves the ports to the title.
 */
export function RiskBadge({
  level,
  score,
  coverage,
  compact = false,
}: {
  level: RiskLevel;
  score?: number;
  coverage?: Coverage | null;
  compact?: boolean;
}) {
  if (level === 'none') {
    const text = !coverage
      ? 'No risk'
      : coverage.scanned
        ? compact
          ? 'No finding'
          : `No finding in ${coverage.ports}`
        : 'No finding · ports not scanned';
    const title = !coverage
      ? undefined
      : coverage.scanned
        ? `No risk found in ${coverage.ports}, examined ${coverage.at ? `${formatDateTime(coverage.at)} or later` : 'by the scans that reached it'}.`
        : 'No scan has examined the ports of this device yet (quick scans check none): run a normal scan to assess it.';
    return (
      <span class={`badge risk-none${coverage && !coverage.scanned ? ' unscanned' : ''}`} title={title}>
        {text}
      </span>
    );
  }
  return (
    <span class={`badge risk-${level}`} title={score === undefined ? undefined : `Risk score ${score} of 100`}>
      {humanize(level)}
      {score !== undefined ? ` · ${score}` : ''}
    </span>
  );
}

export function SeverityBadge({ severity }: { severity: Severity }) {
  return <span class={`badge risk-${severity === 'info' ? 'none' : severity}`}>{humanize(severity)}</span>;
}

/** A time shown relative ("5 minutes ago") with the exact time on hover; `missing` (muted) when there is none. */
export function Time({ iso, relative = true, missing = '—' }: { iso: string | null | undefined; relative?: boolean; missing?: string }) {
  if (!iso) return <span class="muted">{missing}</span>;
  return (
    <time dateTime={iso} title={formatDateTime(iso)}>
      {relative ? formatAgo(iso) : formatDateTime(iso)}
    </time>
  );
}

/**
 * Previous/next paging over a list whose total the API reports in X-Total-Count. The range text
 * ("1–50 of 10,000") is `.pager-range`; `busy` says a new page is on its way.
 */
export function Pager({
  total,
  limit,
  offset,
  onChange,
  busy = false,
}: {
  total: number;
  limit: number;
  offset: number;
  onChange: (offset: number) => void;
  busy?: boolean;
}) {
  if (total === 0 && offset === 0) return null;
  const onePage = total <= limit && offset === 0;
  const first = Math.min(offset + 1, total);
  const last = Math.min(offset + limit, total);
  return (
    <nav class="pager" aria-label="Pages">
      {busy && (
        <span class="muted small" role="status">
          Updating…
        </span>
      )}
      {!onePage && (
        <button type="button" disabled={offset === 0} onClick={() => onChange(Math.max(0, offset - limit))}>
          ← Previous
        </button>
      )}
      <span class="pager-range" aria-live="polite">
        {first.toLocaleString()}–{last.toLocaleString()} of {total.toLocaleString()}
      </span>
      {!onePage && (
        <button type="button" disabled={offset + limit >= total} onClick={() => onChange(offset + limit)}>
          Next →
        </button>
      )}
    </nav>
  );
}

/** A modal dialog on the native <dialog> element (focus trapping and Escape come with it). */
export function Dialog({ open, title, onClose, children }: { open: boolean; title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} class="dialog" aria-label={title} onClose={onClose} onCancel={onClose}>
      <h2>{title}</h2>
      {open && children}
    </dialog>
  );
}

/** A page heading with optional actions beside it. */
export function PageHeader({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <header class="page-header">
      <h1>{title}</h1>
      {children && <div class="page-actions">{children}</div>}
    </header>
  );
}

/**
 * A form control with its label and an optional hint. The hint is tied to the control with
 * aria-describedby, so the control's accessible name stays exactly `label`.
 */
export function Field({
  label,
  hint,
  error,
  children,
}: {
  label: string;
  hint?: ComponentChildren;
  /** What is wrong with the value, in plain words (plain.ts fieldMessage), shown under the field. */
  error?: string | null;
  children: VNode<Record<string, unknown>>;
}) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [errorId, hintId].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {cloneElement(children, { id, 'aria-describedby': describedBy, ...(error ? { 'aria-invalid': 'true' } : {}) })}
      {error && <FieldError id={errorId}>{error}</FieldError>}
      {hint && (
        <span id={hintId} class="hint">
          {hint}
        </span>
      )}
    </div>
  );
}

/** What is wrong with a field's value, under the field. */
export function FieldError({ id, children }: { id?: string; children: ComponentChildren }) {
  return (
    <span id={id} class="field-error" role="alert">
      {children}
    </span>
  );
}

/**
 * The body of a dialog that asks before revoking something for good (an API key, an agent): what
 * it means, the error if the revoke failed, then the revoke button (`label`) and Cancel, focused.
 */
export function RevokeConfirm({
  label,
  busyLabel = 'Revoking…',
  revoke,
  onCancel,
  children,
}: {
  label: string;
  /** The button's text while `revoke` runs. */
  busyLabel?: string;
  revoke: () => Promise<void>;
  onCancel: () => void;
  children: ComponentChildren;
}) {
  const action = useAction(revoke);
  return (
    <div>
      <p>{children}</p>
      <ErrorMessage error={action.error} />
      <div class="button-row">
        <button type="button" class="danger" disabled={action.busy} onClick={() => void action.run()}>
          {action.busy ? busyLabel : label}
        </button>
        <button type="button" autoFocus onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}

/** What a page that revokes things keeps: the one being asked about and the notice after a revoke. */
export interface Revoking<T> {
  item: T | null;
  /** Opens the dialog for `item`. */
  ask: (item: T) => void;
  close: () => void;
  notice: string | null;
  setNotice: (notice: string | null) => void;
  /** After a revoke: the notice (`revokedText`), the dialog closed, the list reloaded. */
  revoked: (item: T) => void;
}

export function useRevoking<T>(revokedText: (item: T) => string, reload: () => void): Revoking<T> {
  const [item, setItem] = useState<T | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  return {
    item,
    ask: setItem,
    close: () => setItem(null),
    notice,
    setNotice,
    revoked: (revokedItem) => {
      setNotice(revokedText(revokedItem));
      setItem(null);
      reload();
    },
  };
}

/**
 * The dialog that asks before revoking `revoking.item` (closed while none): the `RevokeConfirm`
 * with what it means (`children`), running `revoke(item)`, then `revoking.revoked(item)`.
 */
export function RevokeDialog<T>({
  revoking,
  title,
  label,
  revoke,
  children,
}: {
  revoking: Revoking<T>;
  title: string;
  label: string;
  revoke: (item: T) => Promise<unknown>;
  children: (item: T) => ComponentChildren;
}) {
  const item = revoking.item;
  return (
    <Dialog open={item !== null} title={title} onClose={revoking.close}>
      {item !== null && (
        <RevokeConfirm
          label={label}
          revoke={async () => {
            await revoke(item);
            revoking.revoked(item);
          }}
          onCancel={revoking.close}
        >
          {children(item)}
        </RevokeConfirm>
      )}
    </Dialog>
  );
}

/**
 * A table's column headings; those named in `hideNarrow` are hidden on a phone, and `actions` adds
 * a last column for the row's buttons, named for screen readers only.
 */
export function TableHead({ columns, hideNarrow = [], actions = false }: { columns: string[]; hideNarrow?: string[]; actions?: boolean }) {
  return (
    <thead>
      <tr>
        {columns.map((column) => (
          <th key={column} scope="col" class={hideNarrow.includes(column) ? 'hide-narrow' : undefined}>
            {column}
          </th>
        ))}
        {actions && (
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        )}
      </tr>
    </thead>
  );
}

/** A table row's Revoke button, named for screen readers after what it revokes. */
export function RevokeButton({ name, small = false, onClick }: { name: string; small?: boolean; onClick: () => void }) {
  return (
    <button type="button" class={small ? 'small-button danger' : 'danger'} aria-label={`Revoke ${name}`} onClick={onClick}>
      Revoke
    </button>
  );
}
