/** A change between a scan and its baseline, as the API shows it: the one definition. */
import { type Static, Type } from '@sinclair/typebox';
import { CHANGE_TYPES } from '../core/changes.js';
import { SEVERITIES } from '../core/severity.js';
import { Nullable, StringEnum, Timestamp } from './common.js';

export const Change = Type.Object({
  id: Type.Integer(),
  scan_id: Type.Integer(),
  change_type: StringEnum(CHANGE_TYPES),
  severity: StringEnum(SEVERITIES),
  device_id: Nullable(Type.Integer()),
  device_ip: Nullable(Type.String()),
  device_mac: Nullable(Type.String()),
  port: Nullable(Type.Integer()),
  protocol: Nullable(Type.String()),
  old_value: Nullable(Type.String()),
  new_value: Nullable(Type.String()),
  description: Type.String(),
  detected_at: Timestamp,
});

export type Change = Static<typeof Change>;
