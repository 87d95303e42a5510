/**
 * The live events' names (SSE `event:`, CONTRACT §10, §17), in one place for the server's event bus
 * (events/bus.ts, which gives each its payload) and the web UI's stream client. Imports nothing,
 * so the browser bundle may import it.
 */
export const EVENT_NAMES = [
  'scan_queued',
  'scan_started',
  'scan_progress',
  'scan_finished',
  'change',
  'device_updated',
  'device_new',
  'device_offline',
  'device_online',
  'risk_changed',
] as const;

export type EventName = (typeof EVENT_NAMES)[number];
