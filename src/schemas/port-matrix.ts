/** The port matrix (CONTRACT §16, §18), as the API shows it: the one definition. */
import { type Static, Type } from '@sinclair/typebox';
import { RARE_RULE } from '../core/port-matrix.js';
import { RISK_LEVELS } from '../core/severity.js';
import { Nullable, StringEnum } from './common.js';

export const MatrixPort = Type.Object({
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  protocol: Type.String({ description: '`tcp` or `udp`' }),
  service: Nullable(Type.String({ description: 'The service most of its devices report on it; null when none names one' })),
  devices: Type.Integer({ minimum: 1, description: 'How many devices of the matrix have it open (last known state for offline devices)' }),
  forbidden: Type.Boolean({
    description: "Whether it breaks the zone policy of at least one of those devices (port, service or the zone's allow-list)",
  }),
  forbidden_devices: Type.Integer({ minimum: 0, description: 'How many of those devices break their zone policy with it' }),
  rare: Type.Boolean({ description: `Rare: ${RARE_RULE}` }),
});

export const MatrixDevicePort = Type.Object({
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  protocol: Type.String(),
  service: Nullable(Type.String()),
  forbidden: Type.Boolean({ description: "Whether this port breaks the device's zone policy" }),
});

export const MatrixDevice = Type.Object({
  device_id: Type.Integer(),
  name: Nullable(Type.String({ description: "The device's best name (label, else a discovered name)" })),
  ip_address: Type.String(),
  zone: Nullable(Type.String()),
  device_type: Nullable(Type.String()),
  online: Type.Boolean({ description: 'Offline devices are listed with their last known ports' }),
  risk_level: StringEnum(RISK_LEVELS),
  risk_score: Type.Integer({ minimum: 0, maximum: 100 }),
  ports: Type.Array(MatrixDevicePort, { description: 'Its open ports, by port then protocol' }),
});

export const PortMatrix = Type.Object({
  subnet: Nullable(Type.String({ description: 'The subnet filter as applied (host bits cleared), or null' })),
  zone: Nullable(Type.String({ description: 'The zone filter, or null' })),
  total_devices: Type.Integer({ description: 'Devices in the matrix: those matching the filters with at least one open port' }),
  rare_rule: Type.String({ description: 'How `rare` is decided' }),
  ports: Type.Array(MatrixPort, { description: 'Every port open on a device of the matrix, by port then protocol' }),
  devices: Type.Array(MatrixDevice, { description: 'Devices with at least one open port, in IP address order' }),
});

export type PortMatrix = Static<typeof PortMatrix>;
export type MatrixDeviceRecord = Static<typeof MatrixDevice>;
