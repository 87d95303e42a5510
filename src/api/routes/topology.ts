import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { isVirtualInterface } from '../../core/network-detect.js';
import { ZONE_NAME_MAX_LENGTH } from '../../core/limits.js';
import { ipv4ToInt, parseIpv4Network } from '../../core/net.js';
import {
  FALLBACK_SUBNET_PREFIX,
  NARROWEST_SUBNET_PREFIX,
  TopologyBuilder,
  WIDEST_SUBNET_PREFIX,
  defaultGatewayFromProcRoute,
  type TopologyContext,
  type TopologyDevice,
  type TopologyEdge,
  type TopologyNode,
} from '../../core/topology.js';
import { Topology } from '../../schemas/topology.js';
import { toAgentRecord } from '../../store/agents.js';
import { TopologyStore, type TopologyFilters } from '../../store/topology.js';
import { VersionedCache } from '../../store/versioned-cache.js';
import { badRequest } from '../errors.js';
import { StringEnum, errorResponses } from '../schemas.js';
import { readLocalNetwork } from './network.js';
import { listZones } from './zones.js';

/** Devices read from the store per page while the answer streams. */
const PAGE_SIZE = 2000;
/** What an answer holds: every device (the contract's map) or only the structure with per-subnet counts (the overview). */
const DETAILS = ['devices', 'subnets'] as const;
/** Answers kept as sent while the data version is unchanged: at most this many bytes together (the whole map of 100,000 devices is about 30 MiB)... */
const ANSWER_CACHE_BYTES = 80 * 1024 * 1024;
/** ...this many answers... */
const ANSWER_CACHE_ENTRIES = 32;
/** ...and for at most this long even when no write was seen (as the device list's pages). */
const ANSWER_CACHE_MS = 60_000;

/** How long the map's surroundings (networks, agents, the default gateway) are reused at an unchanged data version. */
const SURROUNDINGS_MS = 2_000;

type Surroundings = Omit<TopologyContext, 'showEmptyNetworks' | 'within' | 'attachments'>;

/** An answer as sent: its chunks of UTF-8. */
interface Answer {
  chunks: Buffer[];
  bytes: number;
}

const DESCRIPTION = [
  'The network as a graph (CONTRACT §16, §18): `internet` → gateway(s) → subnets → devices, every edge saying how it is known.',
  '',
  "- **Subnets**: the server's own interface networks (container bridges and VPN tunnels left out; one wider than /16 is taken as the /24",
  `  around the server's address), each agent's networks, and the targets of completed network scans between /${WIDEST_SUBNET_PREFIX} and`,
  `  /${NARROWEST_SUBNET_PREFIX}. A device belongs to the narrowest of them that holds its address, else to the /${FALLBACK_SUBNET_PREFIX} around it.`,
  "  Known networks are drawn even without devices, unless `zone` is given. A subnet node's `device_count` and `risk_level` (its worst",
  "  device's) summarise it, so a client can draw it collapsed; `online_count` and `risk_counts` (devices per risk level) say more.",
  "- **Gateways**: the gateway of the server's default route (read from its routing table, never guessed from an address such as",
  '  `.1`) serves the subnet that holds its address (`confirmed`). Another subnet whose devices include exactly one `router` or',
  '  `firewall` gets that device as its gateway (`inferred`). A gateway in the inventory is a `gateway` node carrying its `device_id`',
  '  and is not also a `device` node.',
  "- **Above a subnet** (or its own gateway): the agent whose networks hold it (`agent` node, `confirmed` by the agent's networks), else",
  "  the server's default gateway (`inferred`: the server reaches it that way), else the internet.",
  "- **Switches and access points** appear only where a source confirms a device hangs off another: a UniFi controller's client and",
  "  device lists (`unifi`), a switch's LLDP neighbours (`lldp`) or bridge forwarding table read over SNMP (`snmp`; docs/recognition.md).",
  '  Then the parent is a `switch` or `access_point` node and the edge is `l2`/`wifi`, `confirmed`, with `confirmed_by` naming the',
  '  source (null on every other edge). A device several sources place goes where the first of unifi, lldp, snmp puts it. No device',
  '  type is guessed into one.',
  '- **Devices**: every device not archived; offline ones have `online: false`. Each hangs off its subnet (`l2`, `inferred`) unless a',
  '  source places it under a switch or access point.',
  '',
  'Edges run from the upper node (`source`) to the lower (`target`); every node but `internet` has exactly one edge up.',
  '',
  '`subnet` keeps the devices whose address lies in that CIDR (and the known networks overlapping it); `zone` keeps the devices of',
  'that zone (one of GET /api/zones). A bad `subnet` or an unknown `zone` → 400.',
  '',
  '**`detail=subnets`** (the overview) answers the same graph without device nodes and their edges: internet, gateways, agents',
  'and subnets, each subnet node with `device_count`, `online_count` and `risk_counts` of the devices matching the filters, counted',
  "by the database per block of addresses rather than read one by one. A client draws it first and asks for one subnet's devices",
  '(`subnet=<its CIDR>`, the same `zone`) when it is opened, as the web UI does: it never needs the whole graph. `detail=devices`',
  '(the default) is the whole graph.',
  '',
  'The answer is streamed as it is read (devices a page at a time: for a `subnet` in address order, walking the address index over',
  'its range only; else in id order; only the subnets and one reference per device are held), so its size is bounded by the',
  'inventory, not by memory. It',
  'is also kept as sent while the inventory, the scanned subnets, the agents and the routing table are unchanged (up to a minute;',
  'about 80 MiB of answers at most), so the same map asked again is sent from memory. With 100,000 devices the whole graph is',
  'about 30 MiB and its first reading takes most of a second (bench/results/views.md); the overview is a few kilobytes.',
].join('\n');

/** The server's own networks: its interfaces' (virtual ones left out), as GET /api/network/detect reports them. */
async function serverNetworks(): Promise<string[]> {
  const detected = await readLocalNetwork();
  const networks: string[] = [];
  for (const iface of detected.interfaces) {
    if (isVirtualInterface(iface.name)) continue;
    const cidr = iface.prefix_length < WIDEST_SUBNET_PREFIX ? `${iface.address}/${FALLBACK_SUBNET_PREFIX}` : iface.subnet;
    const parsed = parseIpv4Network(cidr);
    if (parsed.ok && parsed.value.prefix <= NARROWEST_SUBNET_PREFIX) networks.push(parsed.value.cidr);
  }
  return networks;
}

/** The gateway of the server's default route, from the kernel's routing table; null when none (or not Linux). */
async function defaultGateway(): Promise<string | null> {
  const table = await readFile('/proc/net/route', 'utf8').catch(() => '');
  return defaultGatewayFromProcRoute(table);
}

const text = (value: string | null): string => (value === null ? 'null' : JSON.stringify(value));

/**
 * A node as JSON, written field by field (the map writes up to a hundred thousand of them per
 * answer; this is several times faster than JSON.stringify of the object). The fields and their
 * order are the schema's (schemas/topology.ts); the API test reads them back.
 */
function nodeJson(n: TopologyNode): string {
  return (
    `{"id":${text(n.id)},"kind":"${n.kind}","device_id":${n.device_id ?? 'null'},"label":${text(n.label)},` +
    `"device_type":${text(n.device_type)},"risk_level":${text(n.risk_level)},"online":${n.online},"zone":${text(n.zone)},` +
    `"subnet":${text(n.subnet)},"ip_address":${text(n.ip_address)},"device_count":${n.device_count ?? 'null'}` +
    (n.risk_counts ? `,"online_count":${n.online_count ?? 0},"risk_counts":${JSON.stringify(n.risk_counts)}}` : '}')
  );
}

function edgeJson(e: TopologyEdge): string {
  return `{"source":${text(e.source)},"target":${text(e.target)},"kind":"${e.kind}","evidence":"${e.evidence}","confirmed_by":${text(e.confirmed_by ?? null)}}`;
}

/** The map as JSON text, a chunk per page of devices: `{"nodes":[…],"edges":[…]}`. */
async function* topologyChunks(builder: TopologyBuilder, pages: AsyncIterable<TopologyDevice[]>) {
  let first = true;
  const nodes = (list: readonly TopologyNode[]): string => {
    if (list.length === 0) return '';
    const body = list.map(nodeJson).join(',\n');
    const out = first ? body : `,\n${body}`;
    first = false;
    return out;
  };
  yield `{"nodes":[\n${nodes(builder.firstNodes())}`;
  for await (const page of pages) {
    const chunk = nodes(builder.deviceNodes(page));
    if (chunk) yield chunk;
  }
  yield `${nodes(builder.lastNodes())}\n],\n"edges":[\n`;
  let firstEdge = true;
  for (const edges of builder.edges()) {
    if (edges.length === 0) continue;
    const body = edges.map(edgeJson).join(',\n');
    yield firstEdge ? body : `,\n${body}`;
    firstEdge = false;
  }
  yield '\n]}\n';
}

/** Passes the chunks on as UTF-8 and, once all were sent, gives them to `done` (unless they grew past `max` bytes). */
async function* keeping(chunks: AsyncIterable<string>, max: number, done: (answer: Answer) => void): AsyncGenerator<Buffer> {
  let kept: Buffer[] | null = [];
  let bytes = 0;
  for await (const chunk of chunks) {
    const buffer = Buffer.from(chunk, 'utf8');
    bytes += buffer.length;
    if (kept && bytes <= max) kept.push(buffer);
    else kept = null;
    yield buffer;
  }
  // Kept as one buffer: sent again in one write rather than hundreds.
  if (kept) done({ chunks: [Buffer.concat(kept, bytes)], bytes });
}

async function* noPages(): AsyncGenerator<TopologyDevice[]> {}

/**
 * The overview's counts: devices per block of addresses from the database, and one by one those
 * that need it (gateways, which are no device node; blocks a network narrower than /24 splits).
 */
async function countOverview(builder: TopologyBuilder, topology: TopologyStore, filters: TopologyFilters): Promise<void> {
  const split = builder.splitBlocks();
  const gatewayIds = builder.gatewayDeviceIdList();
  const groups = await topology.blockCounts(filters, gatewayIds);
  builder.countGroups(groups.filter((g) => !split.has(g.block)));
  const unsplit = (page: TopologyDevice[]) => page.filter((d) => !split.has(Math.floor(d.ip_sort / 256)));
  for await (const page of topology.iterate({ ...filters, ids: gatewayIds }, PAGE_SIZE)) builder.countDevices(unsplit(page));
  for (const block of [...split].sort((a, b) => a - b)) {
    const low = Math.max(block * 256, filters.range?.low ?? 0);
    const high = Math.min(block * 256 + 255, filters.range?.high ?? Number.MAX_SAFE_INTEGER);
    if (low > high) continue;
    for await (const page of topology.iterate({ ...filters, range: { low, high } }, PAGE_SIZE)) builder.countDevices(page);
  }
}

export const topologyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app.services;
  const topology = new TopologyStore(store.db);
  /** What the map is drawn in besides the devices: known networks, agents, the default gateway and the devices that may be gateways. */
  const readSurroundings = async (version: number): Promise<Surroundings> => {
    const [own, gateway, scanned, agents] = await Promise.all([serverNetworks(), defaultGateway(), topology.scannedSubnets(), store.agents.list()]);
    const now = Date.now();
    const agentRecords = agents.map((a) => toAgentRecord(a, now));
    return {
      networks: [
        ...own.map((cidr) => ({ cidr, source: 'server' as const })),
        ...agentRecords.flatMap((a) => a.networks.map((cidr) => ({ cidr, source: 'agent' as const }))),
        ...scanned.map((cidr) => ({ cidr, source: 'scan' as const })),
      ],
      agents: agentRecords.map((a) => ({ id: a.id, name: a.name, networks: a.networks, online: a.status === 'online' })),
      defaultGateway: gateway,
      gatewayDevices: await candidates.get(gateway ?? '', () => topology.gatewayCandidates(gateway), version),
    };
  };
  // The devices that may be gateways (a scan of the devices' types) kept at the data version they were read at, as the
  // answers; the interfaces, routing table, scanned subnets and agents' presence (which moves with time) are cheap and
  // read again after SURROUNDINGS_MS.
  const candidates = new VersionedCache<TopologyDevice[]>(() => store.currentDataVersion(), ANSWER_CACHE_MS, 4);
  const surroundings = new VersionedCache<Surroundings>(() => store.currentDataVersion(), SURROUNDINGS_MS, 1);
  const answers = new VersionedCache<Answer>(() => store.currentDataVersion(), ANSWER_CACHE_MS, ANSWER_CACHE_ENTRIES, Date.now, {
    of: (answer) => answer.bytes,
    max: ANSWER_CACHE_BYTES,
  });

  app.get(
    '/api/visualization/topology',
    {
      schema: {
        tags: ['devices'],
        summary: 'The network map: internet, gateways, subnets, agents, switches, access points and devices',
        description: DESCRIPTION,
        querystring: Type.Object(
          {
            subnet: Type.Optional(
              Type.String({ maxLength: 18, description: 'Only devices whose address lies in this IPv4 CIDR network, e.g. `192.168.1.0/24`' }),
            ),
            zone: Type.Optional(
              Type.String({ minLength: 1, maxLength: ZONE_NAME_MAX_LENGTH, description: 'Only devices of this zone (one of GET /api/zones)' }),
            ),
            detail: Type.Optional(
              StringEnum(DETAILS, {
                description: '`devices` (default): the whole graph; `subnets`: the overview, no device nodes, per-subnet counts on the subnet nodes',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          // The body is a stream (the route writes the JSON itself); the schema describes it for OpenAPI.
          200: { description: 'The map, streamed', content: { 'application/json': { schema: Topology as never } } },
          ...errorResponses(400, 401),
        },
      },
    },
    async (request, reply) => {
      const filters: TopologyFilters = {};
      let within: string | undefined;
      if (request.query.subnet !== undefined) {
        const parsed = parseIpv4Network(request.query.subnet);
        if (!parsed.ok || !request.query.subnet.includes('/'))
          throw badRequest(`subnet: must be an IPv4 CIDR network such as 192.168.1.0/24 (got "${request.query.subnet}")`);
        const low = ipv4ToInt(parsed.value.network);
        filters.range = { low, high: low + parsed.value.size - 1 };
        within = parsed.value.cidr;
      }
      if (request.query.zone !== undefined) {
        const zones = await listZones(store);
        if (!zones.includes(request.query.zone)) {
          throw badRequest(
            zones.length > 0
              ? `zone: must be one of ${zones.join(', ')} (got "${request.query.zone}")`
              : `zone: no zone is configured or assigned to a device yet (got "${request.query.zone}")`,
            { allowed: zones },
          );
        }
        filters.zone = request.query.zone;
      }

      const detail = request.query.detail ?? 'devices';
      // Read before anything else: an answer is kept only if no write happened while it was read.
      const version = await answers.currentVersion();
      // Everything but the devices is read before the answer starts, so a failure here is an ordinary error answer.
      const around = await surroundings.get('', () => readSurroundings(version), version);
      const showEmptyNetworks = filters.zone === undefined;
      // The same filters over the same networks, agents and gateways at the same data version: the same answer.
      const key = JSON.stringify([detail, filters.range ?? null, filters.zone ?? null, around, showEmptyNetworks, within ?? null]);
      reply.type('application/json; charset=utf-8');
      const kept = answers.peek(key, version);
      if (kept) return reply.send(Readable.from(kept.chunks, { objectMode: false }));

      const context: TopologyContext = {
        ...around,
        // Which device hangs off which switch or access point: stored rows, so the data version covers them.
        attachments: await topology.attachments(filters),
        showEmptyNetworks,
        within,
      };
      const builder = new TopologyBuilder(context);
      let pages: AsyncIterable<TopologyDevice[]>;
      if (detail === 'subnets') {
        await countOverview(builder, topology, filters);
        pages = noPages();
      } else pages = topology.iterate(filters, PAGE_SIZE);
      const chunks = keeping(topologyChunks(builder, pages), ANSWER_CACHE_BYTES, (answer) => void answers.set(key, version, answer));
      return reply.send(Readable.from(chunks, { objectMode: false }));
    },
  );
};
