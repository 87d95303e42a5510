import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { DEVICE_LABEL_MAX_LENGTH, DEVICE_NOTES_MAX_LENGTH, ZONE_NAME_MAX_LENGTH } from '../../core/limits.js';
import { DeviceDetail, DeviceIdentity, DeviceSummary } from '../../schemas/device.js';
import { DEVICE_TYPES } from '../../core/device-types.js';
import { kevOf } from '../../core/intel.js';
import { riskReason, type ReasonFinding } from '../../core/risk-reason.js';
import { nowIso } from '../../store/clock.js';
import { DEVICE_SORT_KEYS, type DeviceUserFields } from '../../store/devices.js';
import type { Store } from '../../store/index.js';
import { audit } from '../audit.js';
import { HttpError, badRequest, notFound } from '../errors.js';
import { DEVICE_FILTER_PARAMS, deviceFiltersOf } from '../list-filters.js';
import { Id, Nullable, PAGED, StringEnum, errorResponses, pagingQuery } from '../schemas.js';
import { listZones } from './zones.js';
import { VersionedCache } from '../../store/versioned-cache.js';
import { DevicePresenceField, DeviceStatusField, DeviceWatchField } from './device-status.js';

const Text = (max: number) => Nullable(Type.String({ maxLength: max }));

/** Longest a cached page of GET /api/devices is reused even when no write was seen (as the list's counts). */
const PAGE_CACHE_MS = 60_000;
/** Pages kept (about 70 KB each at 100 devices). */
const PAGE_CACHE_ENTRIES = 32;

export const deviceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store, events } = app.services;
  // CVE matches are stored as references: their text comes from the dataset in use.
  const cves = app.services.reevaluator.evaluator.cves;
  const describeCve = (id: string) => cves.entry(id);
  // Pages of the list as sent (the body serialized by the route's schema, and the total), kept
  // while the inventory's data version is the one they were read at: a page asked again (the
  // device list polled, several people on the same view) is neither queried nor serialized again.
  const pages = new VersionedCache<{ body: string; total: number }>(() => store.currentDataVersion(), PAGE_CACHE_MS, PAGE_CACHE_ENTRIES);

  /** Adds `risk_reason` to listed devices: from their open (not accepted) findings and the known exploited CVEs among them. */
  async function withReasons(rows: DeviceSummary[]): Promise<DeviceSummary[]> {
    const ids = rows.filter((d) => d.risk_level !== 'none' || d.risk_score > 0).map((d) => d.id);
    if (ids.length === 0) return rows.map((d) => ({ ...d, risk_reason: null }));
    const [findings, accepted] = await Promise.all([store.findings.ofDevices(ids), store.acceptances.activeOf(ids, nowIso())]);
    const byDevice = new Map<number, ReasonFinding[]>();
    const cveIds = new Set<string>();
    for (const f of findings) {
      if (f.finding_key && accepted.get(f.device_id)?.has(f.finding_key)) continue;
      const cveId = f.kind === 'cve' ? ((JSON.parse(f.cve_ids) as string[])[0] ?? null) : null;
      if (cveId) cveIds.add(cveId);
      let list = byDevice.get(f.device_id);
      if (!list) byDevice.set(f.device_id, (list = []));
      list.push({ kind: f.kind, title: f.title, severity: f.severity, cve_id: cveId });
    }
    const intel = await store.intel.factsOf([...cveIds]);
    const exploited = new Set([...cveIds].filter((id) => kevOf(intel.kev.get(id), cves.entry(id)?.kev) !== null));
    return rows.map((d) => ({ ...d, risk_reason: riskReason(byDevice.get(d.id) ?? [], exploited) }));
  }

  app.get(
    '/api/devices',
    {
      schema: {
        tags: ['devices'],
        summary: 'Device inventory, ordered by IP address unless `sort` says otherwise',
        description: `Filters combine with AND. Archived devices are left out unless \`status=archived\` asks for them. ${PAGED}`,
        querystring: Type.Object(
          {
            ...DEVICE_FILTER_PARAMS,
            sort: Type.Optional(StringEnum(DEVICE_SORT_KEYS, { description: 'Order by this field (default ip_address); empty values sort last' })),
            order: Type.Optional(StringEnum(['asc', 'desc'] as const, { description: 'Sort direction (default asc)' })),
            with_reasons: Type.Optional(
              Type.Boolean({ description: 'Add `risk_reason` to each device: why it has its risk level, in a few words (the web list shows it)' }),
            ),
            ...pagingQuery(),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Array(DeviceSummary), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const { sort, order, limit = 100, offset = 0, with_reasons = false, ...filters } = request.query;
      const read = async () =>
        store.devices.list({
          ...(await deviceFiltersOf(store, filters)),
          excludeArchived: true,
          sort,
          descending: order === 'desc',
          limit,
          offset,
        });
      if (with_reasons) {
        // Not cached: the reasons also follow acceptances and exploit intelligence.
        const { rows, total } = await read();
        reply.header('X-Total-Count', total);
        return withReasons(rows);
      }
      // The parameters in a fixed order: the same page however the client ordered them.
      const key = JSON.stringify(Object.entries(request.query).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
      const page = await pages.get(key, async () => {
        const { rows, total } = await read();
        return { body: reply.serializeInput(rows as unknown as Record<string, unknown>, '200') as string, total };
      });
      reply.header('X-Total-Count', page.total);
      // A string with a JSON content type is sent as it is (already serialized above); the cast only tells the type provider so.
      return reply.type('application/json; charset=utf-8').send(page.body as unknown as DeviceSummary[]);
    },
  );

  app.get(
    '/api/devices/:device_id',
    {
      schema: {
        tags: ['devices'],
        summary: 'One device with its ports, risk details, CVEs and IP history',
        params: Type.Object({ device_id: Id }),
        response: { 200: DeviceDetail, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const device = await store.devices.get(request.params.device_id, describeCve);
      if (!device) throw notFound('Device');
      return device;
    },
  );

  app.put(
    '/api/devices/:device_id',
    {
      schema: {
        tags: ['devices'],
        summary: "Change a device's label (name), type, zone, trust flag, notes, status, watch or presence threshold",
        description:
          'Partial: only the fields sent change. `null` or `""` clears label, zone or notes. `zone` must be one of GET /api/zones. Returns the full device. ' +
          '`name` is the label (`name` wins when both are sent); `device_type` one of the types of CONTRACT §15. A name or type a person set is never overwritten by a scan (its evidence shows `source: "user"`); `null` hands it back to discovery. ' +
          '`status` is `known` or `archived` (`new` is only given by the service). `watch` is merged: only the flags sent change. ' +
          '`presence.offline_after_scans` ("can sleep") sets how many network scans in a row must miss this device before it counts as offline; null follows the setting. ' +
          'When a value changed, the device summary is published as a `device_updated` live event (GET /api/events).',
        params: Type.Object({ device_id: Id }),
        body: Type.Object(
          {
            label: Type.Optional(Text(DEVICE_LABEL_MAX_LENGTH)),
            zone: Type.Optional(Text(ZONE_NAME_MAX_LENGTH)),
            is_trusted: Type.Optional(Type.Boolean()),
            notes: Type.Optional(Text(DEVICE_NOTES_MAX_LENGTH)),
            name: Type.Optional(Text(DEVICE_LABEL_MAX_LENGTH)),
            device_type: Type.Optional(Nullable(StringEnum(DEVICE_TYPES))),
            status: Type.Optional(DeviceStatusField),
            watch: Type.Optional(DeviceWatchField),
            presence: Type.Optional(DevicePresenceField),
          },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: DeviceDetail, ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
    },
    async (request) => {
      const id = request.params.device_id;
      const before = await store.devices.get(id, describeCve);
      if (!before) throw notFound('Device');
      const fields = request.body;
      await checkZone(store, fields.zone);
      await store.devices.updateUserFields(id, fields);
      const after = (await store.devices.get(id, describeCve)) as DeviceDetail;
      if (await auditDeviceUpdate(request, before, after, fields)) {
        for (const summary of await store.devices.summariesOf([id])) events.publish('device_updated', summary);
      }
      return after;
    },
  );

  app.get(
    '/api/devices/:device_id/identity',
    {
      schema: {
        tags: ['devices'],
        summary: 'What the device is and what names it: identity keys, recognition evidence and the decisions scans made',
        params: Type.Object({ device_id: Id }),
        response: { 200: DeviceIdentity, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const identity = await store.identity.get(request.params.device_id);
      if (!identity) throw notFound('Device');
      return identity;
    },
  );

  app.post(
    '/api/devices/bulk',
    {
      schema: {
        tags: ['devices'],
        summary: 'Set the trust flag and/or zone of many devices at once',
        description:
          'All or nothing: when any id does not exist, nothing changes and the answer is 404 listing the missing ids. ' +
          '`zone` must be one of GET /api/zones (`null` or `""` clears it). Each device that changes gets its own `device_updated` audit entry and live event.',
        body: Type.Object(
          {
            device_ids: Type.Array(Id, { minItems: 1, maxItems: 1000, uniqueItems: true, description: 'Devices to change (1–1000)' }),
            is_trusted: Type.Optional(Type.Boolean()),
            zone: Type.Optional(Text(ZONE_NAME_MAX_LENGTH)),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ updated: Type.Integer({ description: 'Devices whose values changed' }), devices: Type.Array(DeviceSummary) }),
          ...errorResponses(400, 401, 403, 404, 413, 415),
        },
      },
    },
    async (request) => {
      const { device_ids: ids, ...fields } = request.body as { device_ids: number[] } & DeviceUserFields;
      if (Object.keys(fields).length === 0) throw badRequest('body: give is_trusted and/or zone to change');
      await checkZone(store, fields.zone);
      const before = await store.devices.summariesOf(ids);
      if (before.length !== ids.length) {
        const found = new Set(before.map((d) => d.id));
        const missing = ids.filter((id) => !found.has(id));
        throw new HttpError('NW_DEVICE_NOT_FOUND', `Devices not found: ${missing.join(', ')}`, { missing });
      }
      await store.devices.updateUserFieldsMany(ids, fields);
      const after = await store.devices.summariesOf(ids);
      let updated = 0;
      for (let i = 0; i < after.length; i++) {
        if (await auditDeviceUpdate(request, before[i], after[i], fields, { bulk: true })) {
          updated++;
          events.publish('device_updated', after[i]);
        }
      }
      return { updated, devices: after };
    },
  );
};

async function checkZone(store: Store, zone: string | null | undefined): Promise<void> {
  if (!zone) return;
  const zones = await listZones(store);
  if (!zones.includes(zone)) throw badRequest(`zone: must be one of ${zones.join(', ')}`, { allowed: zones });
}

/** Writes `device_updated` with old and new values of the fields that changed; false when none did. */
export async function auditDeviceUpdate(
  request: FastifyRequest,
  before: DeviceSummary,
  after: DeviceSummary,
  fields: DeviceUserFields,
  extra: Record<string, unknown> = {},
): Promise<boolean> {
  const changes: Record<string, { old: unknown; new: unknown }> = {};
  for (const key of ['label', 'zone', 'is_trusted', 'notes', 'device_type', 'status', 'watch', 'presence'] as const) {
    if ((key in fields || (key === 'label' && 'name' in fields)) && JSON.stringify(before[key]) !== JSON.stringify(after[key])) {
      changes[key] = { old: before[key], new: after[key] };
    }
  }
  if (Object.keys(changes).length === 0) return false;
  await audit(request, {
    action: 'device_updated',
    resourceType: 'device',
    resourceId: after.id,
    success: true,
    details: { ip_address: after.ip_address, changes, ...extra },
  });
  return true;
}
