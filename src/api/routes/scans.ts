import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { SCAN_PROFILES, type ScanProfile } from '../../core/model.js';
import { ScanDevice, ScanRecord, ScanStatusReport } from '../../schemas/scan.js';
import type { ScanRequest } from '../../scan/manager.js';
import { toScanRecord } from '../../store/scans.js';
import { principalOf } from '../auth.js';
import { notFound } from '../errors.js';
import type { FastifyRequest } from 'fastify';
import { Id, PAGED, StringEnum, errorResponses, pagingQuery } from '../schemas.js';

const Started = Type.Object({
  status: Type.Literal('started'),
  scan_id: Type.Integer(),
  profile: StringEnum(SCAN_PROFILES),
  subnet: Type.String(),
  target: Type.Optional(Type.String()),
});

const Profile = StringEnum(SCAN_PROFILES, {
  description:
    'quick = discovery only; normal = discovery, configured ports, service versions; intensive = all 65,535 ports, OS and default safe scripts. ' +
    'Default: config scanning.default_profile',
});

function actorOf(request: FastifyRequest): ScanRequest['actor'] {
  const principal = principalOf(request);
  return {
    name: principal.actor,
    type: principal.kind === 'api_key' ? 'api_key' : 'user',
    ip: request.ip,
    userAgent: request.headers['user-agent'] ?? null,
  };
}

/** Who asked for a scan, as its record says (CONTRACT §13): the username, or `key:<key name>`. */
export function triggeredByOf(request: FastifyRequest): string {
  const principal = principalOf(request);
  return principal.kind === 'api_key' ? `key:${principal.keyName}` : principal.actor;
}

/** The actor and triggered_by of a scan asked for by this request. */
export function scanRequesterOf(request: FastifyRequest): Pick<ScanRequest, 'actor' | 'triggeredBy'> {
  return { actor: actorOf(request), triggeredBy: triggeredByOf(request) };
}

export const scanRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store, scans } = app.services;

  app.post(
    '/api/scan/trigger',
    {
      schema: {
        tags: ['scans'],
        summary: 'Start a scan of a subnet',
        description:
          'Scans `subnet` (default: config network.subnet) with `profile` (default: config scanning.default_profile), skipping config network.exclude. ' +
          'At most config scanning.max_parallel_scans scans (default 1) run or wait at once, never two with overlapping targets: a trigger ' +
          'whose target overlaps a running or queued scan, or one beyond that number, is answered 409 ' +
          '`{"detail":"A scan is already running","code":"NW_SCAN_BUSY","scan_id":…}` naming the overlapping scan, else a running one (else the oldest queued). ' +
          "A subnet larger than scanning.max_hosts, or outside the allowed scan targets, is a 400. The record's `triggered_by` is the username, or `key:<key name>` for an API key.",
        querystring: Type.Object(
          {
            profile: Type.Optional(Profile),
            subnet: Type.Optional(Type.String({ minLength: 1, maxLength: 43, description: 'IPv4 CIDR such as 192.168.1.0/24, or one address' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Started, ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (request) => {
      const scan = await scans.trigger({ profile: request.query.profile, subnet: request.query.subnet, ...scanRequesterOf(request) });
      return { status: 'started' as const, scan_id: scan.id, profile: scan.profile as ScanProfile, subnet: scan.subnet };
    },
  );

  app.post(
    '/api/scan/device/:ip_address',
    {
      schema: {
        tags: ['scans'],
        summary: 'Scan one device by IP address',
        description:
          "Only that device is compared with its previous state afterwards; `profile` defaults to config scanning.default_profile. 409 as for POST /api/scan/trigger (an overlapping scan, or every scanning.max_parallel_scans slot taken), with that scan's `scan_id`.",
        params: Type.Object({ ip_address: Type.String({ maxLength: 64 }) }),
        querystring: Type.Object({ profile: Type.Optional(Profile) }, { additionalProperties: false }),
        response: { 200: Started, ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (request) => {
      const ip = request.params.ip_address;
      const scan = await scans.trigger({ profile: request.query.profile, device: ip, ...scanRequesterOf(request) });
      return { status: 'started' as const, scan_id: scan.id, profile: scan.profile as ScanProfile, subnet: scan.subnet, target: ip };
    },
  );

  app.post(
    '/api/scans/:scan_id/cancel',
    {
      schema: {
        tags: ['scans'],
        summary: 'Cancel a running or queued scan',
        description:
          'A running scan is stopped (on whichever instance runs it) and a queued one withdrawn; either ends as `cancelled`. ' +
          '409 when the scan has already ended.',
        params: Type.Object({ scan_id: Id }),
        response: { 200: ScanRecord, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      await scans.cancel(request.params.scan_id);
      const row = await store.scans.get(request.params.scan_id);
      if (!row) throw notFound('Scan');
      return toScanRecord(row);
    },
  );

  app.get(
    '/api/scan/status',
    {
      schema: {
        tags: ['scans'],
        summary: 'Whether a scan is running, and its progress',
        description:
          'The running scan (on this instance or another sharing the database), else the queued scan next in line (its `progress` null until it starts). ' +
          'When none, `scan_id`, `subnet`, `profile` and `progress` are null. Every queued scan is listed by GET /api/scans with status `queued`.',
        response: { 200: ScanStatusReport, ...errorResponses(401) },
      },
    },
    async () => {
      const own = scans.current();
      if (own) return { scanning: true, scan_id: own.id, subnet: own.subnet, profile: own.profile, progress: own.progress };
      // A scan run by another instance sharing the database: its last persisted progress.
      const active = await store.scans.active();
      if (!active) return { scanning: false, scan_id: null, subnet: null, profile: null, progress: null };
      const record = toScanRecord(active);
      return { scanning: true, scan_id: record.scan_id, subnet: record.subnet, profile: record.profile, progress: record.progress };
    },
  );

  app.get(
    '/api/scans',
    {
      schema: {
        tags: ['scans'],
        summary: 'Scan history, newest first',
        description: PAGED,
        querystring: Type.Object(pagingQuery(50), { additionalProperties: false }),
        response: { 200: Type.Array(ScanRecord), ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const { limit = 50, offset = 0 } = request.query;
      const { rows, total } = await store.scans.list(limit, offset);
      reply.header('X-Total-Count', total);
      return rows.map(toScanRecord);
    },
  );

  app.get(
    '/api/scans/:scan_id',
    {
      schema: {
        tags: ['scans'],
        summary: 'One scan',
        params: Type.Object({ scan_id: Id }),
        response: { 200: ScanRecord, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const row = await store.scans.get(request.params.scan_id);
      if (!row) throw notFound('Scan');
      return toScanRecord(row);
    },
  );

  app.get(
    '/api/scans/:scan_id/devices',
    {
      schema: {
        tags: ['scans'],
        summary: 'The devices as this scan saw them',
        params: Type.Object({ scan_id: Id }),
        response: { 200: Type.Array(ScanDevice), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const scanId = request.params.scan_id;
      if (!(await store.scans.get(scanId))) throw notFound('Scan');
      return store.devices.scanDevices(scanId);
    },
  );
};
