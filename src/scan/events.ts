/**
 * The live events a completed scan publishes besides its start, progress and end (CONTRACT §10,
 * §17): each stored change, the summary of each device the scan visibly changed, `risk_changed`
 * (reason `scan`) for each device whose risk level it changed, `device_new` for
 * each device it saw for the first time, and `device_offline` / `device_online` for the watched
 * devices whose presence it changed (never for archived ones).
 */
import type { EventBus } from '../events/bus.js';
import type { Store } from '../store/index.js';
import { IDS_PER_STATEMENT, chunks } from '../util/batches.js';
import type { EvaluationOutcome } from './evaluate.js';
import { publishRiskChanges } from './risk-acceptance.js';

/**
 * At most this many `device_updated` events per scan (the devices with the lowest ids first), and
 * as many `device_new`. A scan that changes more devices than this (the first scan after a large
 * network came back) would otherwise push the rest of the replay window out; clients reload the
 * device list on `scan_finished` anyway.
 */
export const DEVICE_EVENTS_PER_SCAN = 500;

export interface ScanEventContext {
  scanId: number;
  /** Devices the scan created (first seen). */
  newDeviceIds: number[];
}

export async function publishScanOutcome(events: EventBus, store: Store, outcome: EvaluationOutcome, context: ScanEventContext): Promise<void> {
  for (const change of outcome.changes) events.publish('change', change);
  for (const ids of chunks(outcome.devicesUpdated.slice(0, DEVICE_EVENTS_PER_SCAN), IDS_PER_STATEMENT)) {
    for (const device of await store.devices.summariesOf(ids)) events.publish('device_updated', device);
  }
  // Then the devices whose risk level the scan changed (CONTRACT §17, §18).
  for (const part of chunks(outcome.riskChanged, IDS_PER_STATEMENT)) await publishRiskChanges(store, events, part, 'scan');
  const fresh = [...new Set(context.newDeviceIds)].sort((a, b) => a - b);
  for (const ids of chunks(fresh.slice(0, DEVICE_EVENTS_PER_SCAN), IDS_PER_STATEMENT)) {
    for (const device of await store.devices.summariesOf(ids)) if (device.status === 'new') events.publish('device_new', device);
  }
  // A new device arriving is `device_new`, not a return.
  const isNew = new Set(fresh);
  const now = Date.now();
  const away = (since: string | null) => (since === null ? null : Math.max(0, Math.round((now - Date.parse(since)) / 1000)));
  for (const [name, ids, flag] of [
    ['device_offline', outcome.departed, 'offline'],
    ['device_online', outcome.arrived.filter((id) => !isNew.has(id)), 'online'],
  ] as const) {
    for (const part of chunks(ids, IDS_PER_STATEMENT)) {
      const watched = (await store.devices.summariesOf(part)).filter((d) => d.watch[flag] && d.status !== 'archived');
      if (watched.length === 0) continue;
      // Gone: since its last sighting. Back: since the sighting before this scan.
      const lastSeen =
        name === 'device_offline'
          ? new Map(watched.map((d) => [d.id, d.last_seen]))
          : await store.devices.previousSightings(
              watched.map((d) => d.id),
              context.scanId,
            );
      for (const device of watched) {
        const since = lastSeen.get(device.id) ?? null;
        events.publish(name, { device, last_seen: since, away_seconds: away(since) });
      }
    }
  }
}
