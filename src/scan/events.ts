/**
 * The live events a completed scan publishes besides its start, progress and end (CONTRACT §10):
 * each stored change, then the summary of each device the scan visibly changed.
 */
import type { EventBus } from '../events/bus.js';
import type { Store } from '../store/index.js';
import { IDS_PER_STATEMENT, chunks } from '../util/batches.js';
import type { EvaluationOutcome } from './evaluate.js';

/**
 * At most this many `device_updated` events per scan (the devices with the lowest ids first). A
 * scan that changes more devices than this (the first scan after a large network came back) would
 * otherwise push the rest of the replay window out; clients reload the device list on
 * `scan_finished` anyway.
 */
export const DEVICE_EVENTS_PER_SCAN = 500;

export async function publishScanOutcome(events: EventBus, store: Store, outcome: EvaluationOutcome): Promise<void> {
  for (const change of outcome.changes) events.publish('change', change);
  for (const ids of chunks(outcome.devicesUpdated.slice(0, DEVICE_EVENTS_PER_SCAN), IDS_PER_STATEMENT)) {
    for (const device of await store.devices.summariesOf(ids)) events.publish('device_updated', device);
  }
}
