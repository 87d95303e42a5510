/**
 * The filters of the device and change lists, defined once: GET /api/devices and GET /api/changes
 * take them with paging, the exports (GET /api/export/…) and `netwarden export` take them alone.
 */
import { Type, type Static } from '@sinclair/typebox';
import { CHANGE_TYPES } from '../core/changes.js';
import { DEVICE_SEARCH_MAX_LENGTH, ZONE_NAME_MAX_LENGTH } from '../core/limits.js';
import { RISK_LEVELS, SEVERITIES } from '../core/severity.js';
import { DEVICE_STATUSES } from '../core/device-status.js';
import type { ChangeFilters } from '../store/changes.js';
import type { DeviceFilters } from '../store/devices.js';
import type { Store } from '../store/index.js';
import { ipv4ToInt, parseIpv4Network } from '../core/net.js';
import { badRequest, describeValidationError, notFound } from './errors.js';
import { Id, StringEnum } from './schemas.js';
import { createValidatorCompiler } from './validation.js';

/** Query parameters that narrow the device inventory (combined with AND). */
export const DEVICE_FILTER_PARAMS = {
  scan_id: Type.Optional({ ...Id, description: 'Only devices seen by this scan (404 when the scan does not exist)' }),
  risk_level: Type.Optional(StringEnum(RISK_LEVELS)),
  is_trusted: Type.Optional(Type.Boolean()),
  zone: Type.Optional(Type.String({ minLength: 1, maxLength: ZONE_NAME_MAX_LENGTH })),
  subnet: Type.Optional(
    Type.String({ maxLength: 18, description: 'Only devices whose address lies in this IPv4 CIDR network, e.g. `192.168.1.0/24` (the Map filter)' }),
  ),
  online: Type.Optional(
    Type.Boolean({
      description:
        'Only devices online (true) or offline (false): a device goes offline after presence.offline_after_scans consecutive completed network scans missed it',
    }),
  ),
  status: Type.Optional(
    StringEnum(DEVICE_STATUSES, {
      description: 'Only devices with this status. Without it the device list leaves archived devices out; exports keep them',
    }),
  ),
  q: Type.Optional(
    Type.String({
      maxLength: DEVICE_SEARCH_MAX_LENGTH,
      description:
        'Free text, case-insensitive: matches part of the IP, MAC, hostname, vendor, label, notes, OS, device type or zone; a number also matches devices with that port open',
    }),
  ),
};

/** Query parameters that narrow the changes (combined with AND). */
export const CHANGE_FILTER_PARAMS = {
  scan_id: Type.Optional(Id),
  change_type: Type.Optional(StringEnum(CHANGE_TYPES)),
  severity: Type.Optional(StringEnum(SEVERITIES)),
  device_id: Type.Optional(Id),
};

/** The device filters as given (query parameters), and as JSON Schema for other callers to validate with. */
export const DeviceFilterQuery = Type.Object(DEVICE_FILTER_PARAMS, { additionalProperties: false });
export type DeviceFilterQuery = Static<typeof DeviceFilterQuery>;
/** The change filters as given (query parameters). */
export const ChangeFilterQuery = Type.Object(CHANGE_FILTER_PARAMS, { additionalProperties: false });
export type ChangeFilterQuery = Static<typeof ChangeFilterQuery>;

/** The store's device filters from the query; an unknown `scan_id` is a 404, as on the list. */
export async function deviceFiltersOf(store: Store, query: DeviceFilterQuery): Promise<DeviceFilters> {
  if (query.scan_id !== undefined && !(await store.scans.get(query.scan_id))) throw notFound('Scan');
  let range: DeviceFilters['range'];
  if (query.subnet !== undefined) {
    const parsed = parseIpv4Network(query.subnet);
    if (!parsed.ok || !query.subnet.includes('/'))
      throw badRequest(`subnet: must be an IPv4 CIDR network such as 192.168.1.0/24 (got "${query.subnet}")`);
    const low = ipv4ToInt(parsed.value.network);
    range = { low, high: low + parsed.value.size - 1 };
  }
  return {
    range,
    scanId: query.scan_id,
    riskLevel: query.risk_level,
    isTrusted: query.is_trusted,
    zone: query.zone,
    online: query.online,
    search: query.q,
    status: query.status,
  };
}

/** The store's change filters from the query. */
export function changeFiltersOf(query: ChangeFilterQuery): ChangeFilters {
  return { scanId: query.scan_id, changeType: query.change_type, severity: query.severity, deviceId: query.device_id };
}

const textValidators = createValidatorCompiler();
const compiled = {
  devices: textValidators({ schema: DeviceFilterQuery, httpPart: 'querystring', method: 'GET', url: '' }),
  changes: textValidators({ schema: ChangeFilterQuery, httpPart: 'querystring', method: 'GET', url: '' }),
};

/**
 * Filters given as text (query parameters, command-line options) checked exactly as the API
 * checks them: the same schema, the same coercion, the same messages (`risk_level: must be one of …`).
 */
export function parseFilters<K extends keyof typeof compiled>(
  kind: K,
  given: Record<string, string>,
): { ok: true; value: K extends 'devices' ? DeviceFilterQuery : ChangeFilterQuery } | { ok: false; error: string } {
  const value: Record<string, unknown> = { ...given };
  const validate = compiled[kind] as ((data: unknown) => boolean) & { errors?: Parameters<typeof describeValidationError>[0] | null };
  if (validate(value)) return { ok: true, value };
  return { ok: false, error: describeValidationError(validate.errors ?? [], 'querystring') };
}
