// Notifications: channels (one form per type), their filters, digest and quiet hours, a Test
// button per channel, and the delivery log. CONTRACT §9 and §13 are the rules; the API checks
// every value and its 400 detail shows where the action was taken.
import { useRef, useState } from 'preact/hooks';
import { SECRET_MASK } from '../../../core/limits.js';
import { answer, api, idParam, page } from '../../api';
import { CONFIG_FIELDS, type ConfigField } from '../../channel-fields';
import { CronPreviewList, TimeZoneField, browserTimeZone } from '../../components/cron-field';
import { HumanizedOptions, SaveCancelButtons } from '../../components/form-parts';
import { Dialog, EmptyState, ErrorMessage, Field, Loading, Notice, Pager, Time } from '../../components/ui';
import { failingChannels, type Failing } from '../../deliveries';
import { plainSocketErrors, unlessField } from '../../plain';
import { humanize } from '../../format';
import { submitRunning, useAction, useResource, useSavedToggle } from '../../hooks';
import {
  CHANGE_TYPES,
  CHANNEL_TYPES,
  DELIVERY_STATUSES,
  SEVERITIES,
  isOneOf,
  type Channel,
  type ChannelType,
  type ChangeType,
  type Delivery,
  type DeviceMessageEvent,
  type ScanOutcome,
  type Severity,
} from '../../types';

const DELIVERIES_PAGE = 20;
/** How many recent deliveries (of all channels) are read to tell which channels keep failing. */
const RECENT_DELIVERIES = 200;
const SCAN_OUTCOMES: ScanOutcome[] = ['completed', 'failed'];
/** The device events a channel can send, in words (a channel sends none until asked). */
const DEVICE_EVENT_WORDS: Record<DeviceMessageEvent, string> = {
  'device.new': 'a new device appears',
  'device.offline': 'a watched device goes offline',
  'device.online': 'a watched device comes back online',
  'risk.changed': 'a device’s risk goes up or down',
};

const TYPE_LABELS: Record<ChannelType, string> = {
  webhook: 'Webhook',
  ntfy: 'ntfy',
  gotify: 'Gotify',
  discord: 'Discord',
  slack: 'Slack',
  email: 'Email',
  mqtt: 'MQTT (Home Assistant)',
};

/** A channel's config by key (its type's schema is one member of the API's union). */
function configOf(channel: Channel): Record<string, unknown> {
  return channel.config;
}

/** The notification channels, a form to add or edit one, and the delivery log. */
export function NotificationSettings() {
  const channels = useResource((signal) => answer(api.GET('/api/notifications/channels', { signal })), []);
  const [editing, setEditing] = useState<Channel | ChannelType | null>(null);
  const [newType, setNewType] = useState<ChannelType>('webhook');
  const [logVersion, setLogVersion] = useState(0);
  const recent = useResource(
    (signal) => answer(api.GET('/api/notifications/deliveries', { params: { query: { limit: RECENT_DELIVERIES } }, signal })),
    [logVersion],
  );
  const failing = failingChannels(recent.data ?? []);
  const [notice, setNotice] = useState<string | null>(null);
  const addButton = useRef<HTMLButtonElement>(null);
  const close = () => {
    setEditing(null);
    setTimeout(() => addButton.current?.focus());
  };
  const changed = () => {
    channels.reload();
    setLogVersion((v) => v + 1);
  };

  return (
    <div class="notifications">
      <p class="muted small">
        After each scan, one message per channel carries the changes that match its filters. Tests and failures are in the delivery log below.
      </p>
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorMessage error={channels.error} onRetry={channels.reload} />
      {channels.loading && !channels.data && <Loading />}
      {channels.data?.length === 0 && editing === null && (
        <EmptyState title="No channels yet">Add one to hear about new devices, opened ports and failed scans.</EmptyState>
      )}
      {channels.data && channels.data.length > 0 && (
        <ul class="channel-list" aria-label="Notification channels">
          {channels.data.map((c) => (
            <ChannelItem
              key={c.id}
              channel={c}
              failing={failing.get(c.id)}
              onEdit={() => {
                setNotice(null);
                setEditing(c);
              }}
              onChanged={changed}
              onDeleted={() => {
                setNotice(`Channel “${c.name}” deleted.`);
                changed();
              }}
            />
          ))}
        </ul>
      )}
      {editing === null ? (
        <div class="settings-inline-form">
          <Field label="Channel type">
            <select value={newType} onChange={(e) => setNewType(e.currentTarget.value as ChannelType)}>
              {CHANNEL_TYPES.map((t) => (
                <option key={t} value={t}>
                  {TYPE_LABELS[t]}
                </option>
              ))}
            </select>
          </Field>
          <button
            type="button"
            ref={addButton}
            onClick={() => {
              setNotice(null);
              setEditing(newType);
            }}
          >
            Add channel
          </button>
        </div>
      ) : (
        <ChannelForm
          key={typeof editing === 'string' ? editing : editing.id}
          channel={typeof editing === 'string' ? null : editing}
          type={typeof editing === 'string' ? editing : editing.type}
          onCancel={close}
          onSaved={(saved, created) => {
            setNotice(`Channel “${saved.name}” ${created ? 'added' : 'saved'}.`);
            changed();
            close();
          }}
        />
      )}
      <DeliveryLog channels={channels.data ?? []} version={logVersion} />
    </div>
  );
}

function ChannelItem({
  channel: c,
  failing,
  onEdit,
  onChanged,
  onDeleted,
}: {
  channel: Channel;
  failing?: Failing | undefined;
  onEdit: () => void;
  onChanged: () => void;
  onDeleted: () => void;
}) {
  const [result, setResult] = useState<Delivery | null>(null);
  const [deleting, setDeleting] = useState(false);
  const test = useAction(async () => {
    setResult(null);
    setResult(await answer(api.POST('/api/notifications/channels/{channel_id}/test', { params: { path: { channel_id: c.id } } })));
    onChanged();
  });
  const toggle = useSavedToggle(c.enabled, async (enabled) => {
    await api.PUT('/api/notifications/channels/{channel_id}', { params: { path: { channel_id: c.id } }, body: { enabled } });
    onChanged();
  });
  const remove = useAction(async () => {
    await api.DELETE('/api/notifications/channels/{channel_id}', { params: { path: { channel_id: c.id } } });
    setDeleting(false);
    onDeleted();
  });
  const config = configOf(c);
  const destination = typeof config.url === 'string' ? config.url : typeof config.host === 'string' ? config.host : '';
  return (
    <li class={c.enabled ? undefined : 'disabled'}>
      <div class="channel-head">
        <strong class="wrap-anywhere">{c.name}</strong>
        <span class="badge">{TYPE_LABELS[c.type]}</span>
        {!c.enabled && <span class="badge status-cancelled">Disabled</span>}
        {failing && <span class="badge status-failed">Failing</span>}
        {c.digest && (
          <span class="small muted">
            digest: <span class="mono">{c.digest}</span>
          </span>
        )}
        {c.quiet_hours && (
          <span class="small muted">
            quiet {c.quiet_hours.start}–{c.quiet_hours.end} ({c.quiet_hours.timezone})
          </span>
        )}
      </div>
      {destination && <div class="small muted mono wrap-anywhere">{destination === SECRET_MASK ? 'URL with credentials (hidden)' : destination}</div>}
      {failing && (
        <p class="small channel-failing">
          The last {failing.count} deliveries failed{failing.lastError ? `: ${plainSocketErrors(failing.lastError)}` : ''}. Check the settings, then
          send a test.
        </p>
      )}
      <div class="button-row">
        <button type="button" class="small-button" disabled={test.busy} aria-label={`Test ${c.name}`} onClick={() => void test.run()}>
          {test.busy ? 'Sending…' : 'Test'}
        </button>
        <button type="button" class="small-button" aria-label={`Edit ${c.name}`} onClick={onEdit}>
          Edit
        </button>
        <label class="checkbox small">
          <input
            type="checkbox"
            checked={toggle.checked}
            disabled={toggle.busy}
            aria-label={`Enabled: ${c.name}`}
            onChange={(e) => toggle.set(e.currentTarget.checked)}
          />
          Enabled
        </label>
        <button type="button" class="small-button danger" aria-label={`Delete ${c.name}`} onClick={() => setDeleting(true)}>
          Delete
        </button>
      </div>
      <ErrorMessage error={test.error ?? toggle.error} />
      {result && <TestResult delivery={result} />}
      <Dialog open={deleting} title="Delete channel" onClose={() => setDeleting(false)}>
        <p>Delete “{c.name}”? No further message goes to it; its delivery log is deleted with it.</p>
        <ErrorMessage error={remove.error} />
        <div class="button-row">
          <button type="button" class="danger" disabled={remove.busy} onClick={() => void remove.run()}>
            Delete channel
          </button>
          <button type="button" onClick={() => setDeleting(false)}>
            Cancel
          </button>
        </div>
      </Dialog>
    </li>
  );
}

/** What the test message did: delivered, failed (with why), or waiting for a retry. */
function TestResult({ delivery: d }: { delivery: Delivery }) {
  if (d.status === 'sent') return <Notice kind="success">Test message delivered.</Notice>;
  if (d.status === 'failed')
    return (
      <div class="alert alert-error" role="alert">
        Test message failed: {d.last_error ? plainSocketErrors(d.last_error) : 'no reason given'}
      </div>
    );
  return (
    <Notice kind="warning">
      Test message not delivered yet{d.last_error ? `: ${plainSocketErrors(d.last_error)}` : ''}. It is retried; see the delivery log.
    </Notice>
  );
}

interface FormState {
  name: string;
  enabled: boolean;
  config: Record<string, string | boolean>;
  /** Secrets (and masked URLs) the user asked to remove. */
  removed: Set<string>;
  changeTypes: ChangeType[] | null;
  minSeverity: Severity;
  zones: string[] | null;
  untrustedOnly: boolean;
  scanEvents: ScanOutcome[];
  deviceEvents: DeviceMessageEvent[];
  digest: string;
  quiet: boolean;
  quietStart: string;
  quietEnd: string;
  quietZone: string;
}

function initialForm(channel: Channel | null, type: ChannelType): FormState {
  const config: Record<string, string | boolean> = {};
  for (const field of CONFIG_FIELDS[type]) {
    const value = channel ? configOf(channel)[field.key] : undefined;
    if (field.kind === 'checkbox') config[field.key] = typeof value === 'boolean' ? value : field.initial === true;
    else if (field.kind === 'list') config[field.key] = Array.isArray(value) ? value.map(String).join('\n') : '';
    // A stored secret reads back as the mask: the field starts empty, "set — leave to keep".
    else if (value === SECRET_MASK) config[field.key] = '';
    else if (value === null || value === undefined) config[field.key] = channel ? '' : ((field.initial as string | undefined) ?? '');
    else config[field.key] = typeof value === 'string' || typeof value === 'number' ? String(value) : JSON.stringify(value);
  }
  const f = channel?.filters;
  return {
    name: channel?.name ?? '',
    enabled: channel?.enabled ?? true,
    config,
    removed: new Set(),
    changeTypes: f ? f.change_types : null,
    minSeverity: f?.min_severity ?? 'low',
    zones: f ? f.zones : null,
    untrustedOnly: f?.untrusted_only ?? false,
    scanEvents: f?.scan_events ?? ['failed'],
    deviceEvents: f?.events ?? [],
    digest: channel?.digest ?? '',
    quiet: Boolean(channel?.quiet_hours),
    quietStart: channel?.quiet_hours?.start ?? '22:00',
    quietEnd: channel?.quiet_hours?.end ?? '07:00',
    quietZone: channel?.quiet_hours?.timezone ?? browserTimeZone(),
  };
}

/** The kinds whose field left empty on an edit is sent as null: back to the default (or unset). */
const RESETTABLE = new Set<ConfigField['kind']>(['text', 'multiline', 'number', 'choice']);

/**
 * The config to send. A new channel gets every filled field. An edit sends what the form shows,
 * except secrets left empty (kept: the API keeps what it stores when a key is absent, or clears it
 * when the destination changed, as §9 says) and those marked for removal (sent as null).
 */
function configPayload(type: ChannelType, channel: Channel | null, form: FormState): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of CONFIG_FIELDS[type]) {
    const value = form.config[field.key];
    const wasSet = channel ? configOf(channel)[field.key] === SECRET_MASK : false;
    if (form.removed.has(field.key)) {
      out[field.key] = null;
      continue;
    }
    if (field.kind === 'checkbox') out[field.key] = value === true;
    else if (field.kind === 'list') {
      out[field.key] = String(value)
        .split(/[\n,]+/)
        .map((s) => s.trim())
        .filter(Boolean);
    } else {
      const text = String(value).trim();
      if (text === '') {
        // Kept (a stored secret or masked URL), or not given (an optional field).
        if (!wasSet && channel && RESETTABLE.has(field.kind)) out[field.key] = null;
        continue;
      }
      out[field.key] = field.kind === 'number' || field.kind === 'choice' ? Number(text) : text;
    }
  }
  return out;
}

function ChannelForm({
  channel,
  type,
  onCancel,
  onSaved,
}: {
  channel: Channel | null;
  type: ChannelType;
  onCancel: () => void;
  onSaved: (saved: Channel, created: boolean) => void;
}) {
  const [form, setForm] = useState(() => initialForm(channel, type));
  const zones = useResource((signal) => answer(api.GET('/api/zones', { signal })), []);
  const update = (patch: Partial<FormState>) => setForm((f) => ({ ...f, ...patch }));
  const setConfig = (key: string, value: string | boolean) => setForm((f) => ({ ...f, config: { ...f.config, [key]: value } }));
  const toggleRemoved = (key: string, on: boolean) =>
    setForm((f) => {
      const removed = new Set(f.removed);
      if (on) removed.add(key);
      else removed.delete(key);
      return { ...f, removed };
    });

  const save = useAction(async () => {
    // The type is chosen once, when the channel is created.
    const body = {
      name: form.name.trim(),
      enabled: form.enabled,
      // Checked by the server against the type's config schema (its 400 names the key).
      config: configPayload(type, channel, form) as Channel['config'],
      filters: {
        change_types: form.changeTypes,
        min_severity: form.minSeverity,
        zones: form.zones,
        untrusted_only: form.untrustedOnly,
        scan_events: form.scanEvents,
        events: form.deviceEvents,
      },
      digest: form.digest.trim() || null,
      quiet_hours: form.quiet ? { start: form.quietStart, end: form.quietEnd, timezone: form.quietZone.trim() } : null,
    };
    const saved = channel
      ? await answer(api.PUT('/api/notifications/channels/{channel_id}', { params: { path: { channel_id: channel.id } }, body }))
      : await answer(api.POST('/api/notifications/channels', { body: { type, ...body } }));
    onSaved(saved, channel === null);
  });
  const submit = submitRunning(save);
  const title = channel ? `Edit “${channel.name}”` : `New ${TYPE_LABELS[type]} channel`;

  return (
    <form class="channel-form" aria-label={title} onSubmit={submit} onKeyDown={(e) => e.key === 'Escape' && onCancel()}>
      <h3>{title}</h3>
      <Field label="Name">
        <input name="name" required maxLength={100} value={form.name} onInput={(e) => update({ name: e.currentTarget.value })} />
      </Field>
      <fieldset>
        <legend>Destination</legend>
        <div class="settings-grid">
          {CONFIG_FIELDS[type].map((field) => (
            <ConfigInput
              key={field.key}
              field={field}
              value={form.config[field.key]}
              stored={channel ? configOf(channel)[field.key] === SECRET_MASK : false}
              removed={form.removed.has(field.key)}
              onChange={(v) => setConfig(field.key, v)}
              onRemove={(on) => toggleRemoved(field.key, on)}
            />
          ))}
        </div>
        {channel && CONFIG_FIELDS[type].some((f) => f.kind === 'secret') && (
          <p class="hint">A new address (URL, server or user) needs its secret again: the old one is never sent to a new destination.</p>
        )}
      </fieldset>
      <fieldset>
        <legend>What to send</legend>
        <div class="check-grid" role="group" aria-label="Change types">
          {CHANGE_TYPES.map((t) => (
            <label key={t} class="checkbox">
              <input
                type="checkbox"
                checked={form.changeTypes === null || form.changeTypes.includes(t)}
                onChange={(e) => update({ changeTypes: toggleIn(form.changeTypes, CHANGE_TYPES, t, e.currentTarget.checked) })}
              />
              {humanize(t)}
            </label>
          ))}
        </div>
        <div class="settings-grid">
          <Field label="Minimum severity">
            <select value={form.minSeverity} onChange={(e) => update({ minSeverity: e.currentTarget.value as Severity })}>
              <HumanizedOptions values={SEVERITIES} />
            </select>
          </Field>
        </div>
        <div class="check-grid" role="group" aria-label="Zones">
          <span class="hint">Zones (none ticked: every device)</span>
          {(zones.data ?? []).map((z) => (
            <label key={z} class="checkbox">
              <input
                type="checkbox"
                checked={form.zones?.includes(z) ?? false}
                onChange={(e) => {
                  const next = new Set(form.zones ?? []);
                  if (e.currentTarget.checked) next.add(z);
                  else next.delete(z);
                  update({ zones: next.size === 0 ? null : [...next] });
                }}
              />
              {z}
            </label>
          ))}
        </div>
        <label class="checkbox">
          <input type="checkbox" checked={form.untrustedOnly} onChange={(e) => update({ untrustedOnly: e.currentTarget.checked })} />
          Only devices not marked trusted
        </label>
        <div class="check-grid" role="group" aria-label="Scan events">
          <span class="hint">Also tell me when a scan</span>
          {SCAN_OUTCOMES.map((o) => (
            <label key={o} class="checkbox">
              <input
                type="checkbox"
                checked={form.scanEvents.includes(o)}
                onChange={(e) => update({ scanEvents: e.currentTarget.checked ? [...form.scanEvents, o] : form.scanEvents.filter((x) => x !== o) })}
              />
              {o === 'completed' ? 'completes' : 'fails'}
            </label>
          ))}
        </div>
        <div class="check-grid" role="group" aria-label="Device events">
          <span class="hint">Tell me at once when</span>
          {(Object.keys(DEVICE_EVENT_WORDS) as DeviceMessageEvent[]).map((event) => (
            <label key={event} class="checkbox">
              <input
                type="checkbox"
                checked={form.deviceEvents.includes(event)}
                onChange={(e) =>
                  update({
                    deviceEvents: e.currentTarget.checked ? [...form.deviceEvents, event] : form.deviceEvents.filter((x) => x !== event),
                  })
                }
              />
              {DEVICE_EVENT_WORDS[event]}
            </label>
          ))}
          <span class="hint">Which devices are watched is set on each device's page (Status and watching).</span>
        </div>
      </fieldset>
      <fieldset>
        <legend>When to send</legend>
        <Field
          label="Digest (cron)"
          hint="Empty: a message after each scan. A cron such as 0 8 * * * collects the changes and sends them once at those times."
        >
          <input name="digest" class="mono" value={form.digest} spellcheck={false} onInput={(e) => update({ digest: e.currentTarget.value })} />
        </Field>
        {form.digest.trim() && <CronPreviewList cron={form.digest} timeZone={form.quiet ? form.quietZone : 'UTC'} />}
        <label class="checkbox">
          <input type="checkbox" checked={form.quiet} onChange={(e) => update({ quiet: e.currentTarget.checked })} />
          Quiet hours (messages wait until they end; critical changes never wait)
        </label>
        {form.quiet && (
          <div class="settings-grid">
            <Field label="Quiet from">
              <input type="time" value={form.quietStart} onInput={(e) => update({ quietStart: e.currentTarget.value })} />
            </Field>
            <Field label="Quiet until">
              <input type="time" value={form.quietEnd} onInput={(e) => update({ quietEnd: e.currentTarget.value })} />
            </Field>
            <TimeZoneField name="quiet_timezone" value={form.quietZone} onChange={(quietZone) => update({ quietZone })} />
          </div>
        )}
      </fieldset>
      <label class="checkbox">
        <input type="checkbox" checked={form.enabled} onChange={(e) => update({ enabled: e.currentTarget.checked })} />
        Enabled
      </label>
      {/* A digest the server refuses shows once, under the field (its preview says why). */}
      <ErrorMessage error={form.digest.trim() ? unlessField(save.error, 'digest') : save.error} />
      <SaveCancelButtons busy={save.busy} label={channel ? 'Save channel' : 'Add channel'} onCancel={onCancel} />
    </form>
  );
}

/** A filter list where null means "all": ticking the last one back gives null again. */
function toggleIn<T extends string>(current: T[] | null, all: readonly T[], value: T, on: boolean): T[] | null {
  const set = new Set(current ?? all);
  if (on) set.add(value);
  else set.delete(value);
  return set.size === all.length ? null : all.filter((v) => set.has(v));
}

/** A schema description as shown: `code` spans in backticks become code. */
function Prose({ text }: { text: string }) {
  return <>{text.split('`').map((part, i) => (i % 2 === 1 ? <code key={i}>{part}</code> : part))}</>;
}

/** The numbers a `choice` field offers, from its schema's range. */
function choicesOf(field: ConfigField): number[] {
  const min = field.min ?? 1;
  const max = field.max ?? min;
  return Array.from({ length: max - min + 1 }, (_, i) => min + i);
}

function ConfigInput({
  field,
  value,
  stored,
  removed,
  onChange,
  onRemove,
}: {
  field: ConfigField;
  value: string | boolean;
  /** A secret (or a URL with credentials) is stored and reads back masked. */
  stored: boolean;
  removed: boolean;
  onChange: (value: string | boolean) => void;
  onRemove: (on: boolean) => void;
}) {
  const name = `config-${field.key}`;
  if (field.kind === 'checkbox') {
    return (
      <label class="checkbox" title={field.hint?.replaceAll('`', '')}>
        <input type="checkbox" name={name} checked={value === true} onChange={(e) => onChange(e.currentTarget.checked)} />
        {field.label}
      </label>
    );
  }
  const hint = stored ? (
    <>
      {field.hint && (
        <>
          <Prose text={field.hint} />{' '}
        </>
      )}
      Set — leave empty to keep it.{' '}
      {!field.required && (
        <label class="checkbox inline">
          <input type="checkbox" checked={removed} onChange={(e) => onRemove(e.currentTarget.checked)} /> Remove it
        </label>
      )}
    </>
  ) : (
    field.hint && <Prose text={field.hint} />
  );
  if (field.kind === 'list' || field.kind === 'multiline') {
    return (
      <Field label={field.label} hint={hint}>
        <textarea
          name={name}
          rows={field.kind === 'list' ? 2 : 4}
          class={field.kind === 'multiline' ? 'mono' : undefined}
          spellcheck={false}
          value={String(value)}
          required={field.required && !stored}
          placeholder={stored ? 'set — leave to keep' : undefined}
          disabled={removed}
          onInput={(e) => onChange(e.currentTarget.value)}
        />
      </Field>
    );
  }
  if (field.kind === 'choice') {
    return (
      <Field label={field.label} hint={hint}>
        <select name={name} value={String(value)} onChange={(e) => onChange(e.currentTarget.value)}>
          <option value="">Automatic</option>
          {choicesOf(field).map((p) => (
            <option key={p} value={String(p)}>
              {p}
            </option>
          ))}
        </select>
      </Field>
    );
  }
  return (
    <Field label={field.label} hint={hint}>
      <input
        name={name}
        type={field.kind === 'secret' ? 'password' : field.kind === 'number' ? 'number' : 'text'}
        inputMode={field.kind === 'url' ? 'url' : undefined}
        autocomplete={field.kind === 'secret' ? 'new-password' : 'off'}
        spellcheck={false}
        required={field.required && !stored}
        min={field.kind === 'number' ? field.min : undefined}
        max={field.kind === 'number' ? field.max : undefined}
        maxLength={field.kind === 'number' ? undefined : field.maxLength}
        // A stored secret shows the mask the API reads it back as; a masked URL says it is kept.
        placeholder={stored ? (field.kind === 'secret' ? SECRET_MASK : 'set — leave to keep') : undefined}
        disabled={removed}
        value={String(value)}
        onInput={(e) => onChange(e.currentTarget.value)}
      />
    </Field>
  );
}

/** Every message sent or tried, newest first; failures stand out with their last error. */
function DeliveryLog({ channels, version }: { channels: Channel[]; version: number }) {
  const [offset, setOffset] = useState(0);
  const [channelId, setChannelId] = useState('');
  const [status, setStatus] = useState('');
  const log = useResource(
    (signal) =>
      page(
        api.GET('/api/notifications/deliveries', {
          params: {
            query: {
              channel_id: idParam(channelId),
              status: isOneOf(DELIVERY_STATUSES, status) ? status : undefined,
              limit: DELIVERIES_PAGE,
              offset,
            },
          },
          signal,
        }),
      ),
    [channelId, status, offset, version],
  );
  const names = new Map(channels.map((c) => [c.id, c.name]));
  return (
    <section class="delivery-log" aria-labelledby="delivery-log">
      <h3 id="delivery-log">Delivery log</h3>
      <div class="filters">
        <Field label="Channel">
          <select
            value={channelId}
            onChange={(e) => {
              setChannelId(e.currentTarget.value);
              setOffset(0);
            }}
          >
            <option value="">All channels</option>
            {channels.map((c) => (
              <option key={c.id} value={String(c.id)}>
                {c.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Status">
          <select
            value={status}
            onChange={(e) => {
              setStatus(e.currentTarget.value);
              setOffset(0);
            }}
          >
            <option value="">Any</option>
            <option value="sent">Sent</option>
            <option value="pending">Pending</option>
            <option value="failed">Failed</option>
          </select>
        </Field>
        <button type="button" onClick={log.reload} disabled={log.loading}>
          Refresh
        </button>
      </div>
      <ErrorMessage error={log.error} onRetry={log.reload} />
      {log.data?.total === 0 && <p class="muted">No messages yet. Press Test on a channel to send one.</p>}
      {log.data && log.data.items.length > 0 && (
        <div class="table-wrap">
          <table aria-label="Deliveries">
            <thead>
              <tr>
                <th>Created</th>
                <th>Channel</th>
                <th>Event</th>
                <th>Status</th>
                <th class="num">Attempts</th>
                <th>Last error</th>
              </tr>
            </thead>
            <tbody>
              {log.data.items.map((d) => (
                <tr key={d.id} class={d.status === 'failed' ? 'delivery-failed' : undefined}>
                  <td>
                    <Time iso={d.created_at} />
                  </td>
                  <td>{names.get(d.channel_id) ?? `#${d.channel_id}`}</td>
                  <td class="mono small">{d.event}</td>
                  <td>
                    <span class={`badge delivery-${d.status}`}>{humanize(d.status)}</span>
                    {d.sent_at && d.status === 'sent' && (
                      <div class="small muted">
                        <Time iso={d.sent_at} />
                      </div>
                    )}
                  </td>
                  <td class="num">{d.attempts}</td>
                  <td class="wrap-anywhere small">{d.last_error ? plainSocketErrors(d.last_error) : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {log.data && <Pager total={log.data.total} limit={DELIVERIES_PAGE} offset={offset} onChange={setOffset} busy={log.loading} />}
    </section>
  );
}
