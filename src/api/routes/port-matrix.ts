import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ZONE_NAME_MAX_LENGTH } from '../../core/limits.js';
import { ipv4ToInt, parseIpv4Network } from '../../core/net.js';
import { RARE_RULE, combinationKey, forbiddenCombinations, matrixPorts } from '../../core/port-matrix.js';
import { PortMatrix } from '../../schemas/port-matrix.js';
import { PortMatrixReader, type MatrixDeviceRow, type PortMatrixFilters } from '../../store/port-matrix.js';
import { VersionedCache } from '../../store/versioned-cache.js';
import { badRequest } from '../errors.js';
import { errorResponses } from '../schemas.js';
import { listZones } from './zones.js';

/** Answers kept (bytes as sent), how many, and for how long at most. */
const ANSWER_CACHE_MB = 64;
const ANSWER_CACHE_ENTRIES = 16;
const ANSWER_CACHE_MS = 5 * 60_000;

const DESCRIPTION = [
  'Devices × open ports (CONTRACT §16, §18, issue 22 §3): every port open on a device of the inventory, with how many devices',
  'have it open, and each device with its open ports.',
  '',
  '- `ports[].devices` is a count. Offline devices count with their last known ports (a port keeps its state until a scan',
  '  examines it again, CONTRACT §14). Archived devices are left out; devices with no open port are not in `devices`.',
  '- `forbidden`: the port breaks the zone policy (GET /api/policies) of at least one of its devices: the port is forbidden, its service',
  "  is forbidden, or the zone has an allow-list without it; `forbidden_devices` counts those devices. A device's port carries",
  '  `forbidden` for that device alone.',
  `- \`rare\`: ${RARE_RULE}. The matrix's devices are those matching the filters with at least one open port (\`total_devices\`).`,
  '- `subnet` keeps devices whose address lies in that IPv4 network; `zone` those assigned to that zone. Combined with AND.',
  '',
  'The answer is streamed: the port counts first (one aggregate query), then the devices in address order a page at a time.',
  'The answer as sent is kept while the inventory and the policies are unchanged (the data version, as for the device list), up',
  `to ${ANSWER_CACHE_MB} MiB of answers for ${ANSWER_CACHE_MS / 60_000} minutes: the same matrix asked again is streamed from memory, not read again.`,
  '',
  '`subnet` not an IPv4 CIDR, `zone` not a zone (GET /api/zones), or any other parameter → 400.',
].join('\n');

function byteLength(chunks: readonly Buffer[]): number {
  let n = 0;
  for (const c of chunks) n += c.length;
  return n;
}

const jsonText = (value: string | null): string => (value === null ? 'null' : JSON.stringify(value));
/** A number as JSON.stringify writes it (a finite number as String gives it; anything else as JSON.stringify would). */
const jsonNumber = (value: number): string =>
  typeof value === 'number' && Number.isFinite(value) ? String(value) : (JSON.stringify(value) ?? 'null');

/**
 * A device of the matrix as JSON: byte for byte JSON.stringify of its MatrixDeviceRecord (the schema's fields in its
 * order, each port with `forbidden` for this device), written as text (a whole network's matrix writes 100,000 of them;
 * several times faster than building the records and stringifying them).
 */
function deviceJson(d: MatrixDeviceRow, forbidden: ReadonlySet<string>): string {
  let ports = '';
  for (const p of d.ports) {
    const isForbidden = forbidden.size > 0 && forbidden.has(combinationKey(d.zone, p.port, p.protocol, p.service));
    ports += `${ports === '' ? '' : ','}{"port":${jsonNumber(p.port)},"protocol":${jsonText(p.protocol)},"service":${jsonText(p.service)},"forbidden":${isForbidden}}`;
  }
  return (
    `{"device_id":${jsonNumber(d.id)},"name":${jsonText(d.name)},"ip_address":${jsonText(d.ip_address)},"zone":${jsonText(d.zone)},` +
    `"device_type":${jsonText(d.device_type)},"online":${d.online},"risk_level":${jsonText(d.risk_level)},"risk_score":${jsonNumber(d.risk_score)},"ports":[${ports}]}`
  );
}

export const portMatrixRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app.services;
  const reader = new PortMatrixReader(store.handle.db, store.dialect);
  // The whole network's matrix is 29 MiB at 100,000 devices and takes seconds to read and write
  // out: kept as sent (the chunks) while the data version is the one it was read at.
  const answers = new VersionedCache<Buffer[]>(() => store.currentDataVersion(), ANSWER_CACHE_MS, ANSWER_CACHE_ENTRIES, Date.now, {
    of: (chunks) => byteLength(chunks),
    max: ANSWER_CACHE_MB * 1024 * 1024,
  });

  app.get(
    '/api/visualization/port-matrix',
    {
      exposeHeadRoute: false,
      schema: {
        tags: ['devices'],
        summary: 'Port matrix: devices × open ports, with forbidden and rare ports',
        description: DESCRIPTION,
        querystring: Type.Object(
          {
            subnet: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 43,
                description: 'Only devices in this IPv4 network, e.g. 192.168.1.0/24 (an address alone is /32)',
              }),
            ),
            zone: Type.Optional(Type.String({ minLength: 1, maxLength: ZONE_NAME_MAX_LENGTH, description: 'Only devices of this zone' })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: { description: 'The matrix (streamed)', content: { 'application/json': { schema: PortMatrix } } },
          ...errorResponses(400, 401),
        },
      },
    },
    async (request, reply) => {
      const filters: PortMatrixFilters = {};
      let subnet: string | null = null;
      if (request.query.subnet !== undefined) {
        const net = parseIpv4Network(request.query.subnet);
        if (!net.ok) throw badRequest('subnet: must be an IPv4 CIDR network such as 192.168.1.0/24');
        subnet = net.value.cidr;
        const low = ipv4ToInt(net.value.network);
        filters.range = { low, high: low + net.value.size - 1 };
      }
      const zone = request.query.zone ?? null;
      if (zone !== null) {
        const zones = await listZones(store);
        if (!zones.includes(zone)) throw badRequest(`zone: "${zone}" is not a zone; zones are ${zones.join(', ')}`);
        filters.zone = zone;
      }
      const send = (stream: Readable) =>
        reply
          .type('application/json; charset=utf-8')
          .header('Cache-Control', 'no-store')
          // A stream: the schema above documents what it carries; Fastify sends it as it is read, unserialised.
          .send(stream as never);
      // Read before the queries, so an answer read across a write is not kept as current.
      const key = JSON.stringify([subnet, zone]);
      const version = await answers.currentVersion();
      const kept = answers.peek(key, version);
      if (kept) return send(Readable.from(kept, { objectMode: false }));

      // The first page of devices is asked for at once, while the port counts are read.
      const pages = reader.pages(filters);
      const firstPage = pages.next();
      firstPage.catch(() => undefined);
      const [{ groups, total }, policies] = await Promise.all([reader.groups(filters), store.policies.get()]).catch(async (err: unknown) => {
        await pages.return(undefined).catch(() => undefined);
        throw err;
      });
      const ports = matrixPorts(groups, policies, total);
      const forbidden = forbiddenCombinations(groups, policies);

      async function* text(): AsyncGenerator<string> {
        const head = { subnet, zone, total_devices: total, rare_rule: RARE_RULE, ports };
        yield `${JSON.stringify(head).slice(0, -1)},"devices":[`;
        let first = true;
        try {
          for (let next = await firstPage; !next.done; next = await pages.next()) {
            const text = next.value.map((d) => deviceJson(d, forbidden)).join(',\n');
            yield first ? `\n${text}` : `,\n${text}`;
            first = false;
          }
        } finally {
          // A client that left: the store's pages (and a page asked for ahead) are let go.
          await pages.return(undefined);
        }
        yield ']}\n';
      }

      /** The answer's chunks as sent; kept at the end unless it outgrew the cache (or the client left). */
      async function* body(): AsyncGenerator<Buffer> {
        let chunks: Buffer[] | null = [];
        let bytes = 0;
        for await (const part of text()) {
          const chunk = Buffer.from(part);
          bytes += chunk.length;
          if (chunks && bytes <= ANSWER_CACHE_MB * 1024 * 1024) chunks.push(chunk);
          else chunks = null;
          yield chunk;
        }
        if (chunks) await answers.set(key, version, chunks);
      }

      return send(Readable.from(body(), { objectMode: false }));
    },
  );
};
