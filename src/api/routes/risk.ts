/**
 * Accepted risk, zone policies, exploit intelligence and the fix-first findings list
 * (CONTRACT §17, §18).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { detectionOf, fixedIn } from '../../core/cve/index.js';
import { ageInDays, comparePriority, compareSeverity, kevOf } from '../../core/intel.js';
import { ACCEPTANCE_REASON_MAX_LENGTH } from '../../core/limits.js';
import { suggestedPolicies, validatePolicies } from '../../core/policies.js';
import type { FindingSeverity } from '../../core/severity.js';
import { Acceptance, FindingKey, FindingListItem, IntelSourceStatus, ZonePolicies } from '../../schemas/risk.js';
import type { AcceptanceRow } from '../../store/acceptances.js';
import { nowIso } from '../../store/clock.js';
import { AlreadyAcceptedError } from '../../store/errors.js';
import { audit } from '../audit.js';
import { principalOf } from '../auth.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { Id, Nullable, PAGED, StringEnum, Timestamp, errorResponses, pagingQuery } from '../schemas.js';
import { listZones } from './zones.js';

export const riskRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store, acceptances } = app.services;
  const dataset = () => app.services.reevaluator.evaluator.cves;

  const describe = async (rows: AcceptanceRow[]): Promise<Acceptance[]> => {
    const devices = new Map((await store.devices.summariesOf([...new Set(rows.map((r) => r.device_id))])).map((d) => [d.id, d]));
    const findings = new Map<number, Map<string, { title: string; severity: string }>>();
    for (const id of devices.keys()) findings.set(id, new Map((await store.evaluation.findingsOf(id)).map((f) => [f.finding_key, f])));
    return rows.flatMap((r) => {
      const d = devices.get(r.device_id);
      if (!d) return [];
      const f = findings.get(r.device_id)?.get(r.finding_key);
      return [
        {
          id: r.id,
          device_id: r.device_id,
          device_ip: d.ip_address,
          device_name: d.label ?? d.hostname,
          finding_key: r.finding_key,
          title: f?.title ?? null,
          severity: f?.severity ?? null,
          reason: r.reason,
          by: r.created_by,
          created_at: r.created_at,
          expires_at: r.expires_at,
        },
      ];
    });
  };

  app.post(
    '/api/acceptances',
    {
      schema: {
        tags: ['risk'],
        summary: 'Accept a finding of a device',
        description:
          'The finding stays listed on the device, marked `acceptance` (who, why, until when), but counts toward neither its level nor its score. ' +
          "`finding_key` is one of the device's findings (GET /api/devices/{id} `risk_details.findings[].finding_key`); `reason` 1–500 characters; " +
          '`expires_at` (optional) a future time: then the finding counts again, `risk_changed` is published and the expiry audited. ' +
          'A second active acceptance of the same finding is a 409. Audited `risk_accepted`.',
        body: Type.Object(
          {
            device_id: Id,
            finding_key: FindingKey,
            reason: Type.String({ minLength: 1, maxLength: ACCEPTANCE_REASON_MAX_LENGTH }),
            expires_at: Type.Optional(Nullable(Timestamp)),
          },
          { additionalProperties: false },
        ),
        response: { 201: Acceptance, ...errorResponses(400, 401, 403, 409, 413, 415) },
      },
    },
    async (request, reply) => {
      const { device_id, finding_key, expires_at } = request.body;
      const reason = request.body.reason.trim();
      if (reason === '') throw badRequest('reason: must not be blank (1–500 characters): say why this risk is accepted');
      const now = nowIso();
      let expiresAt: string | null = null;
      if (expires_at !== undefined && expires_at !== null) {
        const t = Date.parse(expires_at);
        if (!Number.isFinite(t)) throw badRequest('expires_at: must be an ISO 8601 time such as 2027-01-31T00:00:00Z');
        if (t <= Date.parse(now)) throw badRequest('expires_at: must be in the future (leave it out for no expiry)');
        expiresAt = new Date(t).toISOString();
      }
      const device = await store.devices.getRow(device_id);
      if (!device) throw badRequest(`device_id: no device ${device_id}`);
      const findings = await store.evaluation.findingsOf(device_id);
      if (!findings.some((f) => f.finding_key === finding_key)) {
        throw badRequest(`finding_key: device ${device_id} has no finding ${finding_key}; its findings are listed in GET /api/devices/${device_id}`, {
          finding_keys: findings.map((f) => f.finding_key).slice(0, 100),
        });
      }
      const by = principalOf(request).actor;
      let row: AcceptanceRow;
      try {
        row = await store.acceptances.create({ deviceId: device_id, findingKey: finding_key, reason, createdBy: by, createdAt: now, expiresAt });
      } catch (err) {
        if (err instanceof AlreadyAcceptedError) throw conflict('NW_ALREADY_ACCEPTED', err.message);
        throw err;
      }
      await audit(request, {
        action: 'risk_accepted',
        resourceType: 'acceptance',
        resourceId: row.id,
        success: true,
        details: { device_id, ip_address: device.ip_address, finding_key, reason, expires_at: expiresAt },
      });
      await acceptances.accepted(device_id, now);
      reply.status(201);
      return (await describe([row]))[0];
    },
  );

  app.get(
    '/api/acceptances',
    {
      schema: {
        tags: ['risk'],
        summary: 'Active acceptances of risk, newest first',
        description:
          'Acceptances not removed and not expired. `include_ended=true` adds the removed and expired ones (the memory of past decisions).',
        querystring: Type.Object(
          { include_ended: Type.Optional(Type.Boolean({ description: 'Also removed and expired acceptances (default false)' })) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Array(Acceptance), ...errorResponses(400, 401) },
      },
    },
    async (request) => describe(await store.acceptances.list(nowIso(), request.query.include_ended === true)),
  );

  app.delete(
    '/api/acceptances/:id',
    {
      schema: {
        tags: ['risk'],
        summary: 'Remove an acceptance: the finding counts again',
        description:
          "Audited `risk_acceptance_removed`; `risk_changed` is published when the device's level changes. 404 when it does not exist or has already ended.",
        params: Type.Object({ id: Id }),
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const row = await store.acceptances.get(request.params.id);
      const now = nowIso();
      if (!row || !(await store.acceptances.end(row.id, 'removed', now))) throw notFound('Acceptance');
      await audit(request, {
        action: 'risk_acceptance_removed',
        resourceType: 'acceptance',
        resourceId: row.id,
        success: true,
        details: { device_id: row.device_id, finding_key: row.finding_key, reason: row.reason, accepted_by: row.created_by },
      });
      await acceptances.removed(row.device_id, now);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/policies',
    {
      schema: {
        tags: ['risk'],
        summary: 'Zone policies',
        description: 'Zone name → `{forbidden_ports, forbidden_services, allowed_ports, severity}`; `{}` when none is set.',
        response: { 200: ZonePolicies, ...errorResponses(401) },
      },
    },
    async () => store.policies.get(),
  );

  app.get(
    '/api/policies/suggested',
    {
      schema: {
        tags: ['risk'],
        summary: 'Suggested policies for the IoT and Guest zones (offered, not applied)',
        description: 'No telnet, SMB/NetBIOS, RDP, VNC or database ports. PUT them to /api/policies (merged with yours) to apply them.',
        response: { 200: ZonePolicies, ...errorResponses(401) },
      },
    },
    async () => suggestedPolicies(),
  );

  app.put(
    '/api/policies',
    {
      schema: {
        tags: ['risk'],
        summary: 'Replace the zone policies',
        description:
          'Replaces the whole object (`{}` clears all). Zones must be among GET /api/zones; ports 1–65535, TCP unless written `"161/udp"`; ' +
          '`severity` one of critical, high, medium, low (default high). Takes effect at once: devices are re-assessed in the background within seconds, ' +
          'a breach becomes a finding `policy:<zone>:<port>` counted like a rule finding, and a device whose level changes gets a `risk_changed` event. Audited `policies_updated`.',
        body: ZonePolicies,
        response: { 200: ZonePolicies, ...errorResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request) => {
      const checked = validatePolicies(request.body, await listZones(store));
      if (!checked.ok) throw badRequest(checked.error);
      const before = await store.policies.get();
      await store.policies.replace(checked.value);
      await audit(request, { action: 'policies_updated', resourceType: 'policies', success: true, details: { old: before, new: checked.value } });
      return checked.value;
    },
  );

  app.get(
    '/api/intel',
    {
      schema: {
        tags: ['risk'],
        summary: 'Exploit intelligence in use: CISA KEV and FIRST EPSS, with their age',
        description: 'Imported with `netwarden intel import FILE…` (offline). Never imported: `imported_at` and `age_days` null.',
        response: { 200: Type.Array(IntelSourceStatus), ...errorResponses(401) },
      },
    },
    async () => {
      const sources = new Map((await store.intel.sources()).map((s) => [s.source, s]));
      const now = new Date();
      return (['kev', 'epss'] as const).map((source) => {
        const s = sources.get(source);
        return {
          source,
          imported_at: s?.imported_at ?? null,
          as_of: s?.as_of ?? null,
          age_days: s ? ageInDays(s.as_of ?? s.imported_at, now) : null,
          entries: s?.entries ?? 0,
          detail: s?.detail ?? null,
        };
      });
    },
  );

  app.get(
    '/api/findings',
    {
      schema: {
        tags: ['risk'],
        summary: 'Open findings across the inventory, fix first',
        description:
          '`order=priority` (default): known exploited (KEV) first, then EPSS score (none last), then severity, then CVSS. `order=severity`: severity, then CVSS. ' +
          `Accepted findings are left out unless \`include_accepted=true\`. ${PAGED}`,
        querystring: Type.Object(
          {
            order: Type.Optional(StringEnum(['priority', 'severity'] as const)),
            include_accepted: Type.Optional(Type.Boolean()),
            ...pagingQuery(),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Array(FindingListItem), ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const { order = 'priority', include_accepted = false, limit = 100, offset = 0 } = request.query;
      const rows = (await store.findings.all()).filter((r) => r.finding_key !== null);
      const deviceIds = [...new Set(rows.map((r) => r.device_id))];
      const cveOf = (r: { kind: string | null; cve_ids: string }) => (r.kind === 'cve' ? ((JSON.parse(r.cve_ids) as string[])[0] ?? null) : null);
      const [accepted, intel, matchRows] = await Promise.all([
        store.acceptances.activeOf(deviceIds, nowIso()),
        store.intel.factsOf(rows.map(cveOf).filter((c): c is string => c !== null)),
        store.findings.cveMatches(),
      ]);
      const matches = new Map(matchRows.map((m) => [`${m.device_id} ${m.cve_id} ${m.port ?? '-'}`, m]));
      const cves = dataset();
      const items: FindingListItem[] = [];
      for (const r of rows) {
        const a = accepted.get(r.device_id)?.get(r.finding_key!);
        if (a && !include_accepted) continue;
        const cveId = cveOf(r);
        const match = cveId ? matches.get(`${r.device_id} ${cveId} ${r.port ?? '-'}`) : undefined;
        const detection = match ? detectionOf(match.confidence, r) : null;
        const affected = cveId ? cves.entry(cveId)?.affected : undefined;
        items.push({
          finding_key: r.finding_key!,
          device_id: r.device_id,
          device_ip: r.device_ip,
          device_name: r.device_label ?? r.device_hostname,
          port: r.port,
          protocol: r.protocol,
          kind: (r.kind ?? 'rule') as FindingListItem['kind'],
          severity: r.severity as FindingSeverity,
          title: r.title,
          cve_id: cveId,
          product: r.product ? (r.version ? `${r.product} ${r.version}` : r.product) : null,
          product_name: r.product,
          fixed_in: match && affected ? fixedIn(affected, match.matched_version, match.matched_product) : null,
          confidence: detection?.confidence ?? null,
          confidence_reason: detection?.reason ?? null,
          kev: cveId ? kevOf(intel.kev.get(cveId), cves.entry(cveId)?.kev) : null,
          epss: cveId ? (intel.epss.get(cveId) ?? null) : null,
          cvss_score: r.cvss_score,
          acceptance: a ? { id: a.id, by: a.created_by, reason: a.reason, expires_at: a.expires_at, created_at: a.created_at } : null,
        });
      }
      // Stable: equal facts keep the inventory's order (device address, then the device's own order).
      items.sort(order === 'severity' ? compareSeverity : comparePriority);
      reply.header('X-Total-Count', items.length);
      return items.slice(offset, offset + limit);
    },
  );
};
