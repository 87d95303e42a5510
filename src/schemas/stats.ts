/** Aggregates over the inventory and the scan history, as the API shows them: the one definition. */
import { type Static, Type } from '@sinclair/typebox';
import { Nullable, Timestamp } from './common.js';

export const Stats = Type.Object({
  total_devices: Type.Integer(),
  devices_at_risk: Type.Integer({ description: 'Devices whose risk level is medium, high or critical' }),
  critical: Type.Integer(),
  high: Type.Integer(),
  medium: Type.Integer(),
  low: Type.Integer(),
  online_devices: Type.Integer(),
  open_ports: Type.Integer(),
  total_scans: Type.Integer({ description: 'Completed scans' }),
  last_scan: Nullable(Timestamp),
});

export const Trends = Type.Object({
  days: Type.Integer(),
  points: Type.Array(
    Type.Object({
      scan_id: Type.Integer(),
      timestamp: Timestamp,
      devices: Type.Integer(),
      at_risk: Type.Integer(),
      critical: Type.Integer(),
      high: Type.Integer(),
      open_ports: Type.Integer(),
      avg_risk_score: Type.Number(),
      changes: Type.Integer(),
    }),
  ),
});

export type Stats = Static<typeof Stats>;
export type Trends = Static<typeof Trends>;
export type TrendPoint = Trends['points'][number];
