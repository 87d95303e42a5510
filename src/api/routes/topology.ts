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
  GATEWAY_DEVICE_TYPES,
  TopologyBuilder,
  WIDEST_SUBNET_PREFIX,
  defaultGatewayFromProcRoute,
  type DevicePlacement,
  type TopologyContext,
  type TopologyDevice,
  type TopologyEdge,
  type TopologyNode,
} from '../../core/topology.js';
import { Topology } from '../../schemas/topology.js';
import { toAgentRecord } from '../../store/agents.js';
import { TopologyStore, type ChangeMark, type TopologyFilters } from '../../store/topology.js';
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

type Surroundings = Omit<TopologyContext, 'showEmptyNetworks' | 'within' | 'attachments' | 'gatewayDevices'>;

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
  "from the devices the server keeps (below) rather than read again. A client draws it first and asks for one subnet's devices",
  '(`subnet=<its CIDR>`, the same `zone`) when it is opened, as the web UI does: it never needs the whole graph. `detail=devices`',
  '(the default) is the whole graph.',
  '',
  'The answer is streamed (for a `subnet` in address order, else in id order). The server keeps the devices the map draws (the',
  'fields it draws, not archived) and their nodes as sent, and before each answer reads again only the devices written since (each',
  "device's node is written again only when it changed): the whole graph, a subnet, a zone and the overview are drawn from them,",
  'byte for byte what a fresh reading would give. Answers are also kept as sent (up to a minute; about 80 MiB of answers at most),',
  'so the same map asked again is sent from memory while the inventory, the scanned subnets, the agents and the routing table are',
  'unchanged, and also after a write that changed nothing the map draws (a note, ports, last seen) or its switch layer. With 100,000',
  'devices the whole graph is about 30 MiB (bench/results/views.md); the overview is a few kilobytes.',
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

/** The map as JSON text, a chunk per page of devices: `{"nodes":[…],"edges":[…]}`. `pages`: the device nodes as JSON, a page at a time. */
async function* topologyChunks(builder: TopologyBuilder, pages: AsyncIterable<string[]> | Iterable<string[]>) {
  let first = true;
  const nodes = (list: readonly string[]): string => {
    if (list.length === 0) return '';
    const body = list.join(',\n');
    const out = first ? body : `,\n${body}`;
    first = false;
    return out;
  };
  yield `{"nodes":[\n${nodes(builder.firstNodes().map(nodeJson))}`;
  for await (const page of pages) {
    const chunk = nodes(page);
    if (chunk) yield chunk;
  }
  yield `${nodes(builder.lastNodes().map(nodeJson))}\n],\n"edges":[\n`;
  let firstEdge = true;
  for (const edges of builder.edges()) {
    if (edges.length === 0) continue;
    const body = edges.map(edgeJson).join(',\n');
    yield firstEdge ? body : `,\n${body}`;
    firstEdge = false;
  }
  yield '\n]}\n';
}

/** The devices that may be gateways among `devices` (the one at the default gateway's address, routers and firewalls): in address order, then id. */
function gatewayCandidatesOf(devices: Iterable<TopologyDevice>, address: string | null): TopologyDevice[] {
  const types: readonly string[] = GATEWAY_DEVICE_TYPES;
  const out: TopologyDevice[] = [];
  for (const d of devices)
    if ((d.device_type !== null && types.includes(d.device_type)) || (address !== null && d.ip_address === address)) out.push(d);
  return out.sort((a, b) => a.ip_sort - b.ip_sort || a.id - b.id);
}

/** A device's node (and its edge up to its subnet) as sent, kept while the device (the same object) and its placement are the same. */
interface KeptNode {
  device: TopologyDevice;
  subnet: string;
  kind: string;
  json: string;
  /** `subnet:<cidr>` → the device, as JSON: its edge unless a switch or access point is drawn above it. */
  edge: string;
}

/** The device's node (and its edge up to its subnet) as kept, written again only when the device or its placement changed. */
function keptNode(builder: TopologyBuilder, nodes: Map<number, KeptNode>, device: TopologyDevice, placed: DevicePlacement): KeptNode {
  let node = nodes.get(device.id);
  if (!node || node.device !== device || node.subnet !== placed.subnet || node.kind !== placed.kind) {
    node = {
      device,
      subnet: placed.subnet,
      kind: placed.kind,
      json: nodeJson(builder.deviceNode(device, placed)),
      edge: edgeJson({ source: `subnet:${placed.subnet}`, target: `device:${device.id}`, kind: 'l2', evidence: 'inferred' }),
    };
    nodes.set(device.id, node);
  }
  return node;
}

/**
 * The kept devices matching a subnet or zone filter; `ordered`: in the order the store reads them (TopologyStore.iterate),
 * with an address range by address, then id, else by id.
 */
function matchingDevices(
  devices: ReadonlyMap<number, TopologyDevice>,
  order: readonly number[],
  filters: TopologyFilters,
  ordered: boolean,
): TopologyDevice[] {
  const { range, zone } = filters;
  const out: TopologyDevice[] = [];
  for (const id of order) {
    const d = devices.get(id)!;
    if (range && (d.ip_sort < range.low || d.ip_sort > range.high)) continue;
    if (zone !== undefined && d.zone !== zone) continue;
    out.push(d);
  }
  if (range && ordered) out.sort((a, b) => a.ip_sort - b.ip_sort || a.id - b.id);
  return out;
}

/**
 * A filtered map (a subnet, a zone) or the overview from the kept devices: the same bytes as topologyChunks over the
 * store's pages, with the nodes of devices unchanged since they were last written taken as kept.
 */
function filteredMap(
  context: TopologyContext,
  detail: (typeof DETAILS)[number],
  filters: TopologyFilters,
  devices: ReadonlyMap<number, TopologyDevice>,
  order: readonly number[],
  nodes: Map<number, KeptNode>,
): AsyncGenerator<string> {
  const builder = new TopologyBuilder(context);
  const matching = matchingDevices(devices, order, filters, detail === 'devices');
  if (detail === 'subnets') {
    // The overview: every matching device counted into its subnet (a gateway device only draws its subnet).
    builder.countDevices(matching);
    return topologyChunks(builder, []);
  }
  const pages: string[][] = [];
  for (let i = 0; i < matching.length; i += PAGE_SIZE) {
    const page: string[] = [];
    for (const device of matching.slice(i, i + PAGE_SIZE)) {
      const placed = builder.place(device);
      if (placed) page.push(keptNode(builder, nodes, device, placed).json);
    }
    pages.push(page);
  }
  return topologyChunks(builder, pages);
}

/** Kept device nodes go together in blocks of ids (id / 2^11): a write re-joins only its devices' blocks. */
const BLOCK_IDS = 2048;

/** A block's device nodes and edges as sent, kept while it holds the same kept nodes. */
interface KeptBlock {
  entries: KeptNode[];
  nodes: Buffer;
  edges: Buffer | null;
}

const sameEntries = (a: readonly KeptNode[], b: readonly KeptNode[]): boolean => a.length === b.length && a.every((n, i) => n === b[i]);

/**
 * The whole map from the kept devices: the same bytes as topologyChunks over the store's pages (in
 * id order), with each device's node written only when it changed and each block of ids joined
 * only when one of its devices did.
 */
function wholeMap(
  context: TopologyContext,
  devices: ReadonlyMap<number, TopologyDevice>,
  order: readonly number[],
  nodes: Map<number, KeptNode>,
  blocks: Map<number, KeptBlock>,
): Iterable<string | Buffer> {
  const builder = new TopologyBuilder(context);
  const placedBlocks: { block: number; entries: KeptNode[] }[] = [];
  for (const id of order) {
    const device = devices.get(id)!;
    const placed = builder.place(device);
    if (!placed) continue;
    const node = keptNode(builder, nodes, device, placed);
    const block = Math.floor(id / BLOCK_IDS);
    const last = placedBlocks.at(-1);
    if (last && last.block === block) last.entries.push(node);
    else placedBlocks.push({ block, entries: [node] });
  }
  const nodeBuffers: Buffer[] = [];
  const edgeBuffers: Buffer[] = [];
  const seen = new Set<number>();
  for (const { block, entries } of placedBlocks) {
    seen.add(block);
    let kept = blocks.get(block);
    if (!kept || !sameEntries(kept.entries, entries)) {
      kept = { entries, nodes: Buffer.from(entries.map((e) => e.json).join(',\n')), edges: null };
      blocks.set(block, kept);
    }
    nodeBuffers.push(kept.nodes);
    if (entries.some((e) => builder.attachedEdge(e.device.id) !== null)) {
      edgeBuffers.push(
        Buffer.from(
          entries
            .map((e) => {
              const attached = builder.attachedEdge(e.device.id);
              return attached ? edgeJson(attached) : e.edge;
            })
            .join(',\n'),
        ),
      );
    } else {
      kept.edges ??= Buffer.from(entries.map((e) => e.edge).join(',\n'));
      edgeBuffers.push(kept.edges);
    }
  }
  for (const block of [...blocks.keys()]) if (!seen.has(block)) blocks.delete(block);
  const chunks: (string | Buffer)[] = [`{"nodes":[\n${builder.firstNodes().map(nodeJson).join(',\n')}`];
  for (const buffer of nodeBuffers) chunks.push(',\n', buffer);
  const lastNodes = builder.lastNodes().map(nodeJson);
  chunks.push(`${lastNodes.length > 0 ? `,\n${lastNodes.join(',\n')}` : ''}\n],\n"edges":[\n`);
  const upper = builder.upperEdges().map(edgeJson);
  let firstEdge = upper.length === 0;
  if (!firstEdge) chunks.push(upper.join(',\n'));
  for (const buffer of edgeBuffers) {
    if (!firstEdge) chunks.push(',\n');
    chunks.push(buffer);
    firstEdge = false;
  }
  chunks.push('\n]}\n');
  return chunks;
}

/** Whether two readings of a device draw the same: every field of TopologyDevice (all plain values) equal. */
function sameDevice(a: TopologyDevice, b: TopologyDevice): boolean {
  for (const field of Object.keys(a) as (keyof TopologyDevice)[]) if (a[field] !== b[field]) return false;
  return true;
}

/** What KeptDevices.with gives: the devices (not archived) in id order, their kept nodes and blocks, and their generation. */
interface KeptView {
  devices: ReadonlyMap<number, TopologyDevice>;
  order: readonly number[];
  nodes: Map<number, KeptNode>;
  blocks: Map<number, KeptBlock>;
  /** Moves whenever a device was added, removed or read again with another value in a field the map draws; else stays. */
  generation: number;
}

class KeptDevices {
  private devices = new Map<number, TopologyDevice>();
  private order: number[] = [];
  private mark: ChangeMark | null = null;
  private readonly nodes = new Map<number, KeptNode>();
  private readonly blocks = new Map<number, KeptBlock>();
  private generation = 0;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly topology: TopologyStore) {}

  /** The generation now, without bringing the devices up to date (for a kept answer's check once it was sent). */
  currentGeneration(): Promise<number> {
    return Promise.resolve(this.generation);
  }

  /** Brings the devices up to date, then gives them (in id order, as the store's pages) to `use`, before any other update. */
  with<T>(use: (kept: KeptView) => T): Promise<T> {
    const run = this.queue.then(async () => {
      await this.update();
      return use({ devices: this.devices, order: this.order, nodes: this.nodes, blocks: this.blocks, generation: this.generation });
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Keeps `device` as read now: the object kept before when it draws the same (its node stays valid). False: nothing changed. */
  private keep(device: TopologyDevice, into: Map<number, TopologyDevice>): boolean {
    const before = this.devices.get(device.id);
    if (before && sameDevice(before, device)) {
      into.set(device.id, before);
      return false;
    }
    into.set(device.id, device);
    return true;
  }

  private async update(): Promise<void> {
    try {
      const { mark, ids, count } = await this.topology.changesSince(this.mark);
      let members = false;
      let changed = false;
      if (ids === null) {
        const all = new Map<number, TopologyDevice>();
        for await (const page of this.topology.iterate(PAGE_SIZE)) for (const d of page) if (this.keep(d, all)) changed = true;
        // Read again whole (another process wrote): the same devices keep their order and nodes.
        members = all.size !== this.devices.size || [...this.devices.keys()].some((id) => !all.has(id));
        this.devices = all;
      } else if (ids.length > 0) {
        const now = new Map((await this.topology.devicesById(ids)).map((d) => [d.id, d]));
        for (const id of ids) {
          const device = now.get(id);
          const had = this.devices.has(id);
          if (device) {
            if (this.keep(device, this.devices)) changed = true;
          } else if (had) this.devices.delete(id);
          if (had !== (device !== undefined)) members = true;
        }
      }
      // PostgreSQL cannot see deletions by the rows' xmin, so it counts the devices in the same pass; SQLite's
      // triggers note deletions and archiving (status is drawn) and another process's writes read everything again,
      // so it answers no count and needs none (counting 100,000 rows was about 70 ms of every map after a write).
      if (count !== undefined && count !== this.devices.size) {
        // A device deleted, or written while this was read: settle by the ids.
        const present = await this.topology.deviceIds();
        const set = new Set(present);
        for (const id of [...this.devices.keys()]) if (!set.has(id)) this.devices.delete(id);
        const missing = present.filter((id) => !this.devices.has(id));
        for (const d of await this.topology.devicesById(missing)) this.devices.set(d.id, d);
        members = true;
        changed = true;
      }
      if (members) {
        this.order = [...this.devices.keys()].sort((a, b) => a - b);
        for (const id of [...this.nodes.keys()]) if (!this.devices.has(id)) this.nodes.delete(id);
      }
      if (members || changed) this.generation++;
      this.mark = mark;
    } catch (err) {
      // Not known where it stopped: read everything next time.
      this.mark = null;
      this.generation++;
      throw err;
    }
  }
}

/** Passes the chunks on as UTF-8 and, once all were sent, gives them to `done` (unless they grew past `max` bytes). */
async function* keeping(
  chunks: AsyncIterable<string | Buffer> | Iterable<string | Buffer>,
  max: number,
  done: (answer: Answer) => void,
): AsyncGenerator<Buffer> {
  let kept: Buffer[] | null = [];
  let bytes = 0;
  for await (const chunk of chunks) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    bytes += buffer.length;
    if (kept && bytes <= max) kept.push(buffer);
    else kept = null;
    yield buffer;
  }
  // Small chunks kept together: sent again in a few writes rather than hundreds.
  if (kept) done({ chunks: coalesce(kept), bytes });
}

/** Runs of chunks under 64 KiB joined into one. */
function coalesce(chunks: Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  let run: Buffer[] = [];
  let runBytes = 0;
  for (const chunk of chunks) {
    if (chunk.length >= 65536) {
      if (run.length > 0) out.push(Buffer.concat(run, runBytes));
      run = [];
      runBytes = 0;
      out.push(chunk);
    } else {
      run.push(chunk);
      runBytes += chunk.length;
    }
  }
  if (run.length > 0) out.push(Buffer.concat(run, runBytes));
  return out;
}

export const topologyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app.services;
  const topology = new TopologyStore(store.db, store.dialect);
  const kept = new KeptDevices(topology);
  /** What the map is drawn in besides the devices: known networks, agents, the default gateway and the devices that may be gateways. */
  const readSurroundings = async (): Promise<Surroundings> => {
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
    };
  };
  // The interfaces, routing table, scanned subnets and agents' presence (which moves with time) are cheap and read again
  // after SURROUNDINGS_MS or a write.
  const surroundings = new VersionedCache<Surroundings>(() => store.currentDataVersion(), SURROUNDINGS_MS, 1);
  const answers = new VersionedCache<Answer>(() => store.currentDataVersion(), ANSWER_CACHE_MS, ANSWER_CACHE_ENTRIES, Date.now, {
    of: (answer) => answer.bytes,
    max: ANSWER_CACHE_BYTES,
  });
  // The same answers kept by the kept devices' generation (and the switch layer, in the key) rather than the data
  // version: sent again after a write that changed nothing drawn. Mostly the same buffers as `answers`.
  const drawn = new VersionedCache<Answer>(() => kept.currentGeneration(), ANSWER_CACHE_MS, ANSWER_CACHE_ENTRIES, Date.now, {
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
      const around = await surroundings.get('', () => readSurroundings(), version);
      const showEmptyNetworks = filters.zone === undefined;
      // The same filters over the same networks, agents and gateway at the same data version: the same answer.
      const key = JSON.stringify([detail, filters.range ?? null, filters.zone ?? null, around, showEmptyNetworks, within ?? null]);
      reply.type('application/json; charset=utf-8');
      const sent = answers.peek(key, version);
      if (sent) return reply.send(Readable.from(sent.chunks, { objectMode: false }));

      // Which device hangs off which switch or access point: stored rows, so the data version covers them.
      const attachments = await topology.attachments(filters);
      const whole = filters.range === undefined && filters.zone === undefined;
      // The same answer at the same kept devices (none added, removed or drawn differently since) and switch layer: a
      // write that changed nothing the map draws (notes, ports, last seen) leaves the answer as it was.
      const drawnKey = `${key}\u0000${JSON.stringify(attachments)}`;
      // From the kept devices, brought up to date (only the devices written since are read again): the whole map with only
      // the nodes of changed devices written again; a subnet, a zone or the overview picked and counted from them in memory.
      const built = await kept.with(({ devices, order, nodes, blocks, generation }) => {
        const same = drawn.peek(drawnKey, generation);
        if (same) return { same, chunks: null, generation };
        const context: TopologyContext = {
          ...around,
          gatewayDevices: gatewayCandidatesOf(devices.values(), around.defaultGateway),
          attachments,
          showEmptyNetworks,
          within,
        };
        const chunks: AsyncIterable<string | Buffer> | Iterable<string | Buffer> =
          detail === 'devices' && whole
            ? wholeMap(context, devices, order, nodes, blocks)
            : filteredMap(context, detail, filters, devices, order, nodes);
        return { same: null, chunks, generation };
      });
      if (built.same) {
        void answers.set(key, version, built.same);
        return reply.send(Readable.from(built.same.chunks, { objectMode: false }));
      }
      const sending = keeping(built.chunks, ANSWER_CACHE_BYTES, (answer) => {
        void answers.set(key, version, answer);
        void drawn.set(drawnKey, built.generation, answer);
      });
      return reply.send(Readable.from(sending, { objectMode: false }));
    },
  );
};
