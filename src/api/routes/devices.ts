import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { RISK_LEVELS, type DeviceDetail, type DeviceUserFields } from '../../store/devices.js';
import { audit } from '../audit.js';
import { badRequest, notFound } from '../errors.js';
import { Id, Nullable, PAGED, StringEnum, Timestamp, errorResponses, pagingQuery } from '../schemas.js';
import { listZones } from './zones.js';

const Severity = Type.String({ description: 'critical, high, medium, low or info' });

const deviceSummaryFields = {
  id: Type.Integer(),
  ip_address: Type.String(),
  mac_address: Nullable(Type.String()),
  mac_randomized: Type.Boolean({ description: 'The MAC is locally administered (randomised by the device)' }),
  hostname: Nullable(Type.String()),
  vendor: Nullable(Type.String()),
  device_type: Nullable(Type.String()),
  os_name: Nullable(Type.String()),
  label: Nullable(Type.String()),
  zone: Nullable(Type.String()),
  is_trusted: Type.Boolean(),
  notes: Nullable(Type.String()),
  risk_level: StringEnum(RISK_LEVELS),
  risk_score: Type.Integer({ minimum: 0, maximum: 100 }),
  open_ports: Type.Array(Type.Integer()),
  first_seen: Timestamp,
  last_seen: Timestamp,
  last_scan_id: Nullable(Type.Integer()),
  online: Type.Boolean(),
};

export const DeviceSummary = Type.Object(deviceSummaryFields);

export const DeviceDetailSchema = Type.Object({
  ...deviceSummaryFields,
  ports: Type.Array(
    Type.Object({
      port: Type.Integer(),
      protocol: Type.String(),
      state: Type.String(),
      service: Nullable(Type.String()),
      product: Nullable(Type.String()),
      version: Nullable(Type.String()),
      extra_info: Nullable(Type.String()),
      cpe: Type.Array(Type.String()),
    }),
  ),
  risk_details: Type.Object({
    level: StringEnum(RISK_LEVELS),
    score: Type.Integer(),
    summary: Nullable(Type.String()),
    top_recommendation: Nullable(Type.String()),
    findings: Type.Array(
      Type.Object({
        port: Nullable(Type.Integer()),
        protocol: Nullable(Type.String()),
        severity: Severity,
        score: Type.Integer({ description: 'What this finding added to the device score' }),
        service: Nullable(Type.String()),
        title: Type.String(),
        description: Type.String(),
        recommendation: Type.String(),
        cve_ids: Type.Array(Type.String()),
      }),
    ),
  }),
  cves: Type.Array(
    Type.Object({
      id: Type.String(),
      severity: Severity,
      cvss_score: Nullable(Type.Number()),
      description: Type.String(),
      remediation: Nullable(Type.String()),
      references: Type.Array(Type.String()),
      confidence: Type.String({ description: '`confirmed` (product and version match) or `likely`' }),
      port: Nullable(Type.Integer()),
      matched_product: Nullable(Type.String()),
      matched_version: Nullable(Type.String()),
    }),
  ),
  ip_history: Type.Array(Type.Object({ ip_address: Type.String(), first_seen: Timestamp, last_seen: Timestamp })),
});

const Text = (max: number) => Nullable(Type.String({ maxLength: max }));

export const deviceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app.services;

  app.get(
    '/api/devices',
    {
      schema: {
        tags: ['devices'],
        summary: 'Device inventory, ordered by IP address',
        description: `Filters combine with AND. ${PAGED}`,
        querystring: Type.Object(
          {
            scan_id: Type.Optional({ ...Id, description: 'Only devices seen by this scan (404 when the scan does not exist)' }),
            risk_level: Type.Optional(StringEnum(RISK_LEVELS)),
            is_trusted: Type.Optional(Type.Boolean()),
            zone: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
            ...pagingQuery(),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Array(DeviceSummary), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const { scan_id, risk_level, is_trusted, zone, limit = 100, offset = 0 } = request.query;
      if (scan_id !== undefined && !(await store.scans.get(scan_id))) throw notFound('Scan');
      const { rows, total } = await store.devices.list({ scanId: scan_id, riskLevel: risk_level, isTrusted: is_trusted, zone, limit, offset });
      reply.header('X-Total-Count', total);
      return rows;
    },
  );

  app.get(
    '/api/devices/:device_id',
    {
      schema: {
        tags: ['devices'],
        summary: 'One device with its ports, risk details, CVEs and IP history',
        params: Type.Object({ device_id: Id }),
        response: { 200: DeviceDetailSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const device = await store.devices.get(request.params.device_id);
      if (!device) throw notFound('Device');
      return device;
    },
  );

  app.put(
    '/api/devices/:device_id',
    {
      schema: {
        tags: ['devices'],
        summary: "Change a device's label, zone, trust flag or notes",
        description:
          'Partial: only the fields sent change. `null` or `""` clears label, zone or notes. `zone` must be one of GET /api/zones. Returns the full device.',
        params: Type.Object({ device_id: Id }),
        body: Type.Object(
          {
            label: Type.Optional(Text(200)),
            zone: Type.Optional(Text(40)),
            is_trusted: Type.Optional(Type.Boolean()),
            notes: Type.Optional(Text(10_000)),
          },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: DeviceDetailSchema, ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
    },
    async (request) => {
      const id = request.params.device_id;
      const before = await store.devices.get(id);
      if (!before) throw notFound('Device');
      const fields = request.body as DeviceUserFields;
      if (fields.zone) {
        const zones = await listZones(store);
        if (!zones.includes(fields.zone)) throw badRequest(`zone: must be one of ${zones.join(', ')}`, { allowed: zones });
      }
      await store.devices.updateUserFields(id, fields);
      const after = (await store.devices.get(id)) as DeviceDetail;
      const changes: Record<string, { old: unknown; new: unknown }> = {};
      for (const key of ['label', 'zone', 'is_trusted', 'notes'] as const) {
        if (key in fields && before[key] !== after[key]) changes[key] = { old: before[key], new: after[key] };
      }
      if (Object.keys(changes).length > 0) {
        await audit(request, {
          action: 'device_updated',
          resourceType: 'device',
          resourceId: id,
          success: true,
          details: { ip_address: after.ip_address, changes },
        });
      }
      return after;
    },
  );
};
