/** A comparison of two scans (CONTRACT §16, §18), as the API shows it: the one definition. */
import { type Static, Type } from '@sinclair/typebox';
import { COMPARE_STATUSES } from '../core/compare.js';
import { Nullable, StringEnum } from './common.js';
import { ScanRecord } from './scan.js';

export const PortRef = Type.Object({ port: Type.Integer({ minimum: 1, maximum: 65535 }), protocol: Type.String({ description: '`tcp` or `udp`' }) });

export const Risk = Type.Object({ level: Type.String(), score: Type.Integer() });

export const CompareSummary = Type.Object(
  {
    devices_added: Type.Integer({ description: 'Devices the current scan saw that the previous one, whose target held their address, did not' }),
    devices_removed: Type.Integer({ description: 'Devices the previous scan saw that the current one, whose target held their address, did not' }),
    devices_moved: Type.Integer({ description: 'Devices both saw, at different addresses (matched by identity: MAC, else address)' }),
    devices_changed: Type.Integer({ description: 'Devices both saw at the same address whose ports, services or risk differ' }),
    ports_opened: Type.Integer({ description: 'Ports open now and closed before, on devices both saw, counted only where both scans examined them' }),
    ports_closed: Type.Integer({ description: 'Ports open before and closed now, likewise' }),
    services_changed: Type.Integer({ description: 'Ports open in both whose service, product or version differs' }),
    risk_changed: Type.Integer({ description: 'Devices both saw whose risk level or score differs' }),
  },
  { additionalProperties: false },
);

export const DeviceComparison = Type.Object({
  device_id: Type.Integer(),
  name: Nullable(Type.String({ description: "The device's label, else its host name" })),
  status: StringEnum(COMPARE_STATUSES),
  ip_before: Nullable(Type.String({ description: 'Its address in the previous scan; null when that scan did not see it' })),
  ip_after: Nullable(Type.String({ description: 'Its address in the current scan; null when that scan did not see it' })),
  mac_address: Nullable(Type.String()),
  ports_opened: Type.Array(PortRef),
  ports_closed: Type.Array(PortRef),
  services_changed: Type.Array(
    Type.Object({
      port: Type.Integer(),
      protocol: Type.String(),
      before: Type.String({ description: 'What answered before: service, product and version (`ssh OpenSSH 8.9p1`)' }),
      after: Type.String({ description: 'What answers now' }),
    }),
  ),
  risk_before: Nullable(Risk),
  risk_after: Nullable(Risk),
});

export const Comparison = Type.Object({
  current: ScanRecord,
  previous: ScanRecord,
  summary: CompareSummary,
  devices: Type.Array(DeviceComparison, {
    description:
      'Devices whose status is not `unchanged` (all with `include_unchanged=true`): added, removed, moved, changed (then unchanged), each by address',
  }),
});

export type Comparison = Static<typeof Comparison>;
export type DeviceComparisonRecord = Static<typeof DeviceComparison>;
