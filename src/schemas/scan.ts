/**
 * A scan as the API shows it: the record, its progress, the status of the running scan, and the
 * devices as one scan saw them. The one definition for routes, store and OpenAPI.
 */
import { type Static, Type } from '@sinclair/typebox';
import { SCAN_STATUSES } from '../core/model.js';
import { Nullable, StringEnum, Timestamp } from './common.js';

export const ScanProgress = Type.Object({
  phase: Type.String(),
  percent: Type.Number({ minimum: 0, maximum: 100 }),
  hosts_total: Nullable(Type.Integer()),
  hosts_found: Type.Integer(),
  hosts_done: Type.Integer(),
  current_host: Nullable(Type.String()),
  elapsed_seconds: Type.Number(),
  eta_seconds: Nullable(Type.Number()),
});

export const ScanRecord = Type.Object({
  scan_id: Type.Integer(),
  status: StringEnum(SCAN_STATUSES),
  profile: Type.String(),
  subnet: Type.String(),
  scan_type: StringEnum(['network', 'device'] as const),
  target: Nullable(Type.String()),
  started_at: Nullable(Timestamp),
  completed_at: Nullable(Timestamp),
  duration_seconds: Nullable(Type.Number()),
  devices_found: Type.Integer(),
  error: Nullable(Type.String()),
  triggered_by: Nullable(
    Type.String({ description: 'Who asked for it: `<username>`, `key:<key name>`, `cli`, `schedule:<name>`, or `import` (an nmap report imported)' }),
  ),
  progress: Nullable(ScanProgress),
  runner: Nullable(
    Type.String({
      description:
        'Who runs or ran the scan: `server <name>` (a `netwarden serve` process), `worker <name>` (a `netwarden worker`), `agent <name>`, or `import` (an nmap report, POST /api/scans/import); null while queued',
    }),
  ),
  agent_id: Nullable(
    Type.Integer({ description: "The agent the scan is routed to (its target lies in the agent's networks); null for the server's workers" }),
  ),
  warnings: Type.Array(Type.String(), { description: 'Problems that did not stop the scan (a name source that did not answer, …)' }),
  ports_examined: Nullable(
    Type.String({
      description:
        'The ports the scan examined on the hosts it reached, nmap-style: `1-1000,1883,8080` for TCP; UDP ports follow `udp:` ' +
        "(`1-1000,udp:53,161`; `udp:53,161` for UDP only). Recorded as the scan is recorded (an agent's scan: when the agent takes it); " +
        'null for a discovery-only scan and before. Only these ports changed in the inventory (CONTRACT §14)',
    }),
  ),
  hosts_examined: Nullable(
    Type.Integer({
      minimum: 0,
      description:
        'How many hosts had their ports examined (and recorded) by the scan: the hosts it reached with its port scan, which may be fewer than ' +
        '`devices_found` when a host stopped answering after discovery. Null for a discovery-only scan and while none was recorded',
    }),
  ),
});

/** `GET /api/scan/status`: whether a scan is running, and its progress. */
export const ScanStatusReport = Type.Object({
  scanning: Type.Boolean(),
  scan_id: Nullable(Type.Integer()),
  subnet: Nullable(Type.String()),
  profile: Nullable(Type.String()),
  progress: Nullable(ScanProgress),
});

export const ScanDevice = Type.Object({
  device_id: Type.Integer(),
  ip_address: Type.String(),
  mac_address: Nullable(Type.String()),
  hostname: Nullable(Type.String()),
  vendor: Nullable(Type.String()),
  os_name: Nullable(Type.String()),
  open_ports: Type.Array(Type.Integer()),
  risk_level: Type.String(),
  risk_score: Type.Integer(),
});

export type ScanProgress = Static<typeof ScanProgress>;
export type ScanRecord = Static<typeof ScanRecord>;
export type ScanStatusReport = Static<typeof ScanStatusReport>;
export type ScanDevice = Static<typeof ScanDevice>;
