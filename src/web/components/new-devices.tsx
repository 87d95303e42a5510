// The dashboard's "New devices" inbox (CONTRACT §17, issue 23 §1): every device a scan saw for the
// first time and nobody acknowledged yet, with what a person decides about it in one place: its
// name, trust and zone, then acknowledge (it is mine), archive (hide it) or delete it.
import { useState } from 'preact/hooks';
import { DEVICE_LABEL_MAX_LENGTH } from '../../core/limits.js';
import { answer, api, page } from '../api';
import { formatNumber, plural } from '../format';
import { useAction, useResource } from '../hooks';
import { useRefreshOn } from '../live';
import type { DeviceSummary } from '../types';
import { TypeIcon } from './type-icon';
import { Dialog, ErrorMessage, Loading, Notice, RevokeConfirm, Time } from './ui';

/** New devices listed at once; "Acknowledge all" covers every new device, listed or not. */
const SHOWN = 10;
/** The API's largest page: the most new devices one "Acknowledge all" acknowledges. */
const ALL_LIMIT = 1000;

export function NewDevicesInbox() {
  const list = useResource(
    (signal) => page(api.GET('/api/devices', { params: { query: { status: 'new', sort: 'first_seen', order: 'desc', limit: SHOWN } }, signal })),
    [],
  );
  useRefreshOn(['device_new', 'device_updated', 'scan_finished'], list.reload);
  const zones = useResource((signal) => answer(api.GET('/api/zones', { signal })), []);
  const [notice, setNotice] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<DeviceSummary | null>(null);
  const done = (message: string) => {
    setNotice(message);
    list.reload();
  };
  const acknowledgeAll = useAction(async () => {
    const all = await page(api.GET('/api/devices', { params: { query: { status: 'new', limit: ALL_LIMIT } } }));
    if (all.items.length === 0) return done('No new devices left to acknowledge.');
    const result = await answer(api.POST('/api/devices/acknowledge', { body: { device_ids: all.items.map((d) => d.id) } }));
    done(`Acknowledged ${plural(result.acknowledged, 'new device')}.`);
  });

  const items = list.data?.items ?? [];
  const total = list.data?.total ?? 0;
  // Nothing new: the inbox stays out of the way (a notice from the last action still shows).
  if (list.data && total === 0 && !notice) return null;
  return (
    <section class="card new-devices" aria-label="New devices">
      <div class="card-header">
        <h2>New devices{total > 0 ? ` (${formatNumber(total)})` : ''}</h2>
        {total > 0 && (
          <button type="button" disabled={acknowledgeAll.busy} onClick={() => void acknowledgeAll.run()}>
            {acknowledgeAll.busy ? 'Acknowledging…' : total === 1 ? 'Acknowledge' : `Acknowledge all ${formatNumber(total)}`}
          </button>
        )}
      </div>
      <p class="small muted">
        Seen for the first time by a scan. Name the ones you know and acknowledge them; archive what you do not want to hear about again.
      </p>
      {notice && <Notice kind="success">{notice}</Notice>}
      <ErrorMessage error={list.error ?? acknowledgeAll.error} onRetry={list.error ? list.reload : undefined} />
      <ErrorMessage error={zones.error} onRetry={zones.reload} />
      {list.loading && !list.data && <Loading />}
      {list.data && total === 0 && <p class="muted">No new devices.</p>}
      {items.length > 0 && (
        <ul class="inbox-list">
          {items.map((d) => (
            <InboxItem key={d.id} device={d} zones={zones.data ?? []} onDone={done} onDelete={() => setDeleting(d)} />
          ))}
        </ul>
      )}
      {total > items.length && (
        <p class="small">
          <a href="/devices?status=new">All {formatNumber(total)} new devices →</a>
        </p>
      )}
      <DeleteDialog device={deleting} onClose={() => setDeleting(null)} onDeleted={(d) => done(`Deleted ${deviceName(d)}.`)} />
    </section>
  );
}

const deviceName = (d: DeviceSummary) => d.name || d.hostname || d.ip_address;

/** One new device: its facts, then name, zone and trust, and the three decisions. */
function InboxItem({
  device: d,
  zones,
  onDone,
  onDelete,
}: {
  device: DeviceSummary;
  zones: string[];
  onDone: (message: string) => void;
  onDelete: () => void;
}) {
  const [label, setLabel] = useState(d.label ?? '');
  const [zone, setZone] = useState(d.zone ?? '');
  const [trusted, setTrusted] = useState(d.is_trusted);
  const zoneOptions = d.zone && !zones.includes(d.zone) ? [...zones, d.zone] : zones;
  const path = { params: { path: { device_id: d.id } } };
  /** The edits made here, as PUT /api/devices/{id} takes them; null when nothing changed. */
  const edits = () => {
    const body: { label?: string | null; zone?: string | null; is_trusted?: boolean } = {};
    if (label.trim() !== (d.label ?? '')) body.label = label.trim() || null;
    if (zone !== (d.zone ?? '')) body.zone = zone || null;
    if (trusted !== d.is_trusted) body.is_trusted = trusted;
    return Object.keys(body).length > 0 ? body : null;
  };
  const acknowledge = useAction(async () => {
    const body = edits();
    if (body) await answer(api.PUT('/api/devices/{device_id}', { ...path, body }));
    const after = await answer(api.POST('/api/devices/{device_id}/acknowledge', path));
    onDone(`Acknowledged ${after.name || after.hostname || after.ip_address}.`);
  });
  const archive = useAction(async () => {
    const after = await answer(api.PUT('/api/devices/{device_id}', { ...path, body: { ...edits(), status: 'archived' } }));
    onDone(`Archived ${after.name || after.hostname || after.ip_address}: it is left out of lists and alerts.`);
  });
  const busy = acknowledge.busy || archive.busy;
  const submit = (e: Event) => {
    e.preventDefault();
    void acknowledge.run();
  };
  const facts = [d.vendor, d.model, d.hostname && d.hostname !== d.name ? d.hostname : null].filter(Boolean).join(' · ');
  return (
    <li class="inbox-item">
      <div class="detail-head">
        <TypeIcon type={d.device_type} confidence={d.type_confidence} />
        <a href={`/devices/${d.id}`}>{deviceName(d)}</a>
        {deviceName(d) !== d.ip_address && <span class="mono small muted">{d.ip_address}</span>}
        <span class="small muted">
          first seen <Time iso={d.first_seen} />
        </span>
      </div>
      {facts && <p class="small muted">{facts}</p>}
      <form class="inbox-form" onSubmit={submit} aria-label={`Decide about ${d.ip_address}`}>
        <label class="inbox-field">
          <span>Name</span>
          <input
            value={label}
            maxLength={DEVICE_LABEL_MAX_LENGTH}
            placeholder={d.name ?? 'A name of your own'}
            onInput={(e) => setLabel(e.currentTarget.value)}
          />
        </label>
        <label class="inbox-field">
          <span>Zone</span>
          <select value={zone} onChange={(e) => setZone(e.currentTarget.value)}>
            <option value="">No zone</option>
            {zoneOptions.map((z) => (
              <option key={z} value={z}>
                {z}
              </option>
            ))}
          </select>
        </label>
        <label class="checkbox inbox-trust">
          <input type="checkbox" checked={trusted} onChange={(e) => setTrusted(e.currentTarget.checked)} />
          Trusted
        </label>
        <div class="button-row">
          <button type="submit" class="primary" disabled={busy} aria-label={`Acknowledge ${d.ip_address}`}>
            Acknowledge
          </button>
          <button type="button" disabled={busy} onClick={() => void archive.run()} aria-label={`Archive ${d.ip_address}`}>
            Archive
          </button>
          <button type="button" class="danger" disabled={busy} onClick={onDelete} aria-label={`Delete ${d.ip_address}`}>
            Delete
          </button>
        </div>
      </form>
      <ErrorMessage error={acknowledge.error ?? archive.error} />
    </li>
  );
}

function DeleteDialog({ device, onClose, onDeleted }: { device: DeviceSummary | null; onClose: () => void; onDeleted: (d: DeviceSummary) => void }) {
  return (
    <Dialog open={device !== null} title="Delete device" onClose={onClose}>
      {device !== null && (
        <RevokeConfirm
          label="Delete device"
          busyLabel="Deleting…"
          revoke={async () => {
            await answer(api.DELETE('/api/devices/{device_id}', { params: { path: { device_id: device.id } } }));
            onClose();
            onDeleted(device);
          }}
          onCancel={onClose}
        >
          {deviceName(device)} and its history (ports, findings, changes) are removed. If a scan sees it again, it comes back as a new device.
        </RevokeConfirm>
      )}
    </Dialog>
  );
}
