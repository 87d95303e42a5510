/**
 * The network map (CONTRACT §16, §18): internet → gateway(s) → subnets → devices, built from what
 * is known and saying how each link is known. Pure: the store hands in the devices a page at a
 * time and the known networks, agents and gateway; the route streams what comes out.
 *
 * - Subnets: the server's own interface networks, each agent's networks and the networks completed
 *   scans targeted (a scan target wider than /16 or narrower than /30 is no subnet). A device
 *   belongs to the narrowest of them holding its address, else to the /24 around it.
 * - Gateways: the gateway of the server's default route (its routing table; never "the first .1")
 *   serves the subnet holding its address, `confirmed`. A subnet without it whose devices include
 *   exactly one router or firewall is given that device as its gateway, `inferred`. A gateway that
 *   is a device of the inventory is a `gateway` node carrying its `device_id`, never also a device.
 * - Above a subnet: its gateway, then the agent whose networks hold it (an agent scans it from
 *   inside, `confirmed` by the agent's configuration), else the server's gateway (`inferred`: the
 *   server reaches it through its default route), else the internet.
 * - Switches and access points: only where a source confirms a device hangs off another (a
 *   controller's client table, a switch's bridge table): the parent becomes a `switch` or
 *   `access_point` node and the edge is `confirmed`, `l2` or `wifi`. Nothing is guessed from device types.
 * - Every other device hangs off its subnet: `l2`, `inferred` (same subnet).
 *
 * Every node but the internet has exactly one edge up; edges run from the upper node (`source`,
 * nearer the internet) to the lower (`target`).
 */
import type { LinkParentKind, LinkSource } from './device-links.js';
import { RISK_LEVELS, worse, type RiskLevel } from './severity.js';
import { intToIpv4, ipv4ToInt, parseIpv4Network } from './net.js';

export const TOPOLOGY_NODE_KINDS = ['internet', 'gateway', 'subnet', 'agent', 'switch', 'access_point', 'device'] as const;
export type TopologyNodeKind = (typeof TOPOLOGY_NODE_KINDS)[number];
export const TOPOLOGY_EDGE_KINDS = ['uplink', 'l3', 'l2', 'wifi'] as const;
export type TopologyEdgeKind = (typeof TOPOLOGY_EDGE_KINDS)[number];
export const TOPOLOGY_EVIDENCE = ['inferred', 'measured', 'confirmed'] as const;
export type TopologyEvidence = (typeof TOPOLOGY_EVIDENCE)[number];

/** Device types that may be a subnet's gateway when no routing table names one. */
export const GATEWAY_DEVICE_TYPES = ['router', 'firewall'] as const;

/** Scan targets wider than this prefix are not taken as one subnet (a /8 sweep is many networks). */
export const WIDEST_SUBNET_PREFIX = 16;
/** Scan targets narrower than this (single hosts, point-to-point links) are not subnets. */
export const NARROWEST_SUBNET_PREFIX = 30;
/** The block a device outside every known network is put in. */
export const FALLBACK_SUBNET_PREFIX = 24;

export interface TopologyNode {
  id: string;
  kind: TopologyNodeKind;
  device_id: number | null;
  label: string;
  device_type: string | null;
  risk_level: RiskLevel | null;
  online: boolean;
  zone: string | null;
  subnet: string | null;
  ip_address: string | null;
  /** Subnet nodes: how many device, switch and access-point nodes the subnet holds in this answer; else null. */
  device_count: number | null;
  /** Subnet nodes only: how many of them are online. */
  online_count?: number;
  /** Subnet nodes only: how many of them are at each risk level. */
  risk_counts?: Record<RiskLevel, number>;
}

/** Per risk level, all zero. */
export const noRiskCounts = (): Record<RiskLevel, number> => Object.fromEntries(RISK_LEVELS.map((l) => [l, 0])) as Record<RiskLevel, number>;

export interface TopologyEdge {
  source: string;
  target: string;
  kind: TopologyEdgeKind;
  evidence: TopologyEvidence;
  /** A switch or access point's edge to its client: the source whose table confirms it (`unifi`, `snmp`, `lldp`). */
  confirmed_by?: LinkSource;
}

/** What the map needs of a device. */
export interface TopologyDevice {
  id: number;
  ip_address: string;
  /** The address as an integer (the store's ip_sort). */
  ip_sort: number;
  /** Its best name (label, else a discovered name), or null. */
  name: string | null;
  hostname: string | null;
  device_type: string | null;
  risk_level: RiskLevel;
  online: boolean;
  zone: string | null;
}

export type NetworkSource = 'server' | 'agent' | 'scan';

export interface KnownNetwork {
  cidr: string;
  source: NetworkSource;
}

export interface TopologyAgent {
  id: number;
  name: string;
  networks: string[];
  online: boolean;
}

/** A device a source says hangs off another device (a switch port, an access point). */
export interface Attachment {
  device_id: number;
  parent_device_id: number;
  kind: 'l2' | 'wifi';
  /** What the source says the parent is; absent: an access point when a client is on its Wi-Fi, else a switch. */
  parent_kind?: LinkParentKind;
  /** The source that states it (store/device-links.ts). */
  source?: LinkSource;
}

export interface TopologyContext {
  networks: KnownNetwork[];
  agents: TopologyAgent[];
  /** The gateway of the server's default route, or null when it has none. */
  defaultGateway: string | null;
  /** Devices (not archived) that may be gateways: the one at the default gateway's address, routers, firewalls. */
  gatewayDevices: TopologyDevice[];
  attachments: Attachment[];
  /**
   * Subnets without devices in the answer are drawn only when they are known networks and this is
   * true (no zone filter); `within` narrows them to those overlapping a subnet filter.
   */
  showEmptyNetworks: boolean;
  within?: string;
}

interface Subnet {
  cidr: string;
  low: number;
  high: number;
  prefix: number;
  source: NetworkSource | 'address';
  count: number;
  online: number;
  risks: Record<RiskLevel, number>;
  risk: RiskLevel | null;
}

interface Gateway {
  id: string;
  ip: string;
  subnet: Subnet | null;
  device: TopologyDevice | null;
  evidence: TopologyEvidence;
}

/** Where a device's node goes: its subnet and its kind (a device, or the switch or access point others hang off). */
export interface DevicePlacement {
  subnet: string;
  kind: 'device' | 'switch' | 'access_point';
}

const BLOCK_CACHE_SIZE = 4096;

function rangeOf(cidr: string): { low: number; high: number; prefix: number; cidr: string } | null {
  const parsed = parseIpv4Network(cidr);
  if (!parsed.ok) return null;
  const low = ipv4ToInt(parsed.value.network);
  return { low, high: low + parsed.value.size - 1, prefix: parsed.value.prefix, cidr: parsed.value.cidr };
}

/** `10.0.0.0/24 … 10.0.1.0/24` overlap when either holds the other. */
function overlaps(a: { low: number; high: number }, b: { low: number; high: number }): boolean {
  return a.low <= b.high && b.low <= a.high;
}

/** The device's node label: its name, else its host name, else its address. */
export function deviceLabel(device: Pick<TopologyDevice, 'name' | 'hostname' | 'ip_address'>): string {
  return device.name ?? device.hostname ?? device.ip_address;
}

/**
 * Builds the map a page of devices at a time: `firstNodes()`, then `deviceNodes(page)` for every
 * page of devices (in any order; each device once), then `lastNodes()` and `edges()`. Only the
 * subnets, gateways and one parent reference per device are held, never the devices' nodes.
 */
export class TopologyBuilder {
  private readonly subnets = new Map<string, Subnet>();
  /** Known networks, narrowest first. */
  private readonly known: Subnet[];
  /** Per /24 block: the narrowest known network of prefix ≤ 24 holding it (null: none). */
  private readonly blockCache = new Map<number, Subnet | null>();
  private readonly narrowKnown: Subnet[];
  private readonly defaultGateway: Gateway | null;
  /** Gateways by subnet CIDR (the default one included) and the device ids they stand for. */
  private readonly gatewayOfSubnet = new Map<string, Gateway>();
  private readonly gatewayDeviceIds = new Set<number>();
  private readonly parentOf = new Map<number, Attachment>();
  private readonly parentKinds = new Map<number, 'switch' | 'access_point'>();
  private readonly emittedParents = new Set<number>();
  /** One entry per device node given: its id, and its subnet (an index into subnetList) or its parent. */
  private deviceIds: number[] = [];
  private deviceSubnets: number[] = [];
  private readonly subnetList: Subnet[] = [];
  private readonly subnetIndex = new Map<Subnet, number>();
  private readonly within: { low: number; high: number } | null;

  constructor(private readonly context: TopologyContext) {
    this.within = context.within ? rangeOf(context.within) : null;
    const known = new Map<string, Subnet>();
    const rank: Record<NetworkSource, number> = { server: 0, agent: 1, scan: 2 };
    for (const network of context.networks) {
      const range = rangeOf(network.cidr);
      if (!range) continue;
      if (network.source === 'scan' && (range.prefix < WIDEST_SUBNET_PREFIX || range.prefix > NARROWEST_SUBNET_PREFIX)) continue;
      const existing = known.get(range.cidr);
      if (existing && rank[existing.source as NetworkSource] <= rank[network.source]) continue;
      known.set(range.cidr, { ...range, source: network.source, count: 0, online: 0, risks: noRiskCounts(), risk: null });
    }
    for (const subnet of known.values()) this.subnets.set(subnet.cidr, subnet);
    this.known = [...known.values()].sort((a, b) => b.prefix - a.prefix || a.low - b.low);
    this.narrowKnown = this.known.filter((s) => s.prefix > FALLBACK_SUBNET_PREFIX);

    // Gateways: the default route's first, then one router or firewall per subnet without one.
    const byIp = new Map(context.gatewayDevices.map((d) => [d.ip_address, d]));
    if (context.defaultGateway) {
      const ip = context.defaultGateway;
      const device = byIp.get(ip) ?? null;
      const subnet = this.subnetOf(ipv4ToInt(ip));
      this.defaultGateway = { id: `gateway:${ip}`, ip, subnet, device, evidence: 'confirmed' };
      this.gatewayOfSubnet.set(subnet.cidr, this.defaultGateway);
      if (device) this.gatewayDeviceIds.add(device.id);
    } else {
      this.defaultGateway = null;
    }
    const routers = new Map<string, TopologyDevice[]>();
    for (const device of context.gatewayDevices) {
      if (!device.device_type || !(GATEWAY_DEVICE_TYPES as readonly string[]).includes(device.device_type)) continue;
      const subnet = this.subnetOf(device.ip_sort);
      if (this.gatewayOfSubnet.has(subnet.cidr)) continue;
      routers.set(subnet.cidr, [...(routers.get(subnet.cidr) ?? []), device]);
    }
    for (const [cidr, list] of routers) {
      if (list.length !== 1) continue;
      const [device] = list;
      this.gatewayOfSubnet.set(cidr, {
        id: `gateway:${device.ip_address}`,
        ip: device.ip_address,
        subnet: this.subnets.get(cidr)!,
        device,
        evidence: 'inferred',
      });
      this.gatewayDeviceIds.add(device.id);
    }

    // Attachments: a parent must not be a gateway, and chains must not loop.
    const given = new Map(context.attachments.map((a) => [a.device_id, a]));
    for (const attachment of context.attachments) {
      if (this.gatewayDeviceIds.has(attachment.device_id) || this.gatewayDeviceIds.has(attachment.parent_device_id)) continue;
      const seen = new Set([attachment.device_id]);
      let up: Attachment | undefined = attachment;
      let loops = false;
      while (up) {
        if (seen.has(up.parent_device_id)) {
          loops = true;
          break;
        }
        seen.add(up.parent_device_id);
        up = given.get(up.parent_device_id);
      }
      if (loops) continue;
      this.parentOf.set(attachment.device_id, attachment);
      const kind = attachment.parent_kind ?? (attachment.kind === 'wifi' ? 'access_point' : 'switch');
      if (kind === 'access_point') this.parentKinds.set(attachment.parent_device_id, 'access_point');
      else if (!this.parentKinds.has(attachment.parent_device_id)) this.parentKinds.set(attachment.parent_device_id, 'switch');
    }
  }

  /** The narrowest known network holding the address, else its /24 (created on first use). */
  private subnetOf(ip: number): Subnet {
    for (const subnet of this.narrowKnown) if (ip >= subnet.low && ip <= subnet.high) return subnet;
    const block = Math.floor(ip / 256);
    let found = this.blockCache.get(block);
    if (found === undefined) {
      found = null;
      for (const subnet of this.known) {
        if (subnet.prefix <= FALLBACK_SUBNET_PREFIX && ip >= subnet.low && ip <= subnet.high) {
          found = subnet;
          break;
        }
      }
      if (this.blockCache.size >= BLOCK_CACHE_SIZE) this.blockCache.clear();
      this.blockCache.set(block, found);
    }
    if (found) return found;
    const low = block * 256;
    const cidr = `${intToIpv4(low)}/${FALLBACK_SUBNET_PREFIX}`;
    let subnet = this.subnets.get(cidr);
    if (!subnet) {
      subnet = {
        cidr,
        low,
        high: low + 255,
        prefix: FALLBACK_SUBNET_PREFIX,
        source: 'address',
        count: 0,
        online: 0,
        risks: noRiskCounts(),
        risk: null,
      };
      this.subnets.set(cidr, subnet);
    }
    return subnet;
  }

  private indexOf(subnet: Subnet): number {
    let index = this.subnetIndex.get(subnet);
    if (index === undefined) {
      index = this.subnetList.length;
      this.subnetList.push(subnet);
      this.subnetIndex.set(subnet, index);
    }
    return index;
  }

  firstNodes(): TopologyNode[] {
    return [
      {
        id: 'internet',
        kind: 'internet',
        device_id: null,
        label: 'Internet',
        device_type: null,
        risk_level: null,
        online: true,
        zone: null,
        subnet: null,
        ip_address: null,
        device_count: null,
      },
    ];
  }

  /** The nodes of a page of devices (a gateway device is left out: it is its gateway's node). */
  deviceNodes(devices: readonly TopologyDevice[]): TopologyNode[] {
    const nodes: TopologyNode[] = [];
    for (const device of devices) {
      const placed = this.place(device);
      if (placed) nodes.push(this.deviceNode(device, placed));
    }
    return nodes;
  }

  /**
   * Takes the next device (as deviceNodes does, one at a time): counts it into its subnet and says
   * where its node goes, the subnet's CIDR and the node's kind; null for a gateway device (no node
   * of its own). Whoever keeps a device's node (as text) may reuse it while the device and this
   * placement are the same; else `deviceNode` gives it.
   */
  place(device: TopologyDevice): DevicePlacement | null {
    const subnet = this.subnetOf(device.ip_sort);
    if (this.gatewayDeviceIds.has(device.id)) {
      // Drawn as its subnet's gateway; the subnet is drawn with it.
      this.indexOf(subnet);
      return null;
    }
    this.tally(subnet, device.risk_level, device.online, 1);
    this.deviceIds.push(device.id);
    this.deviceSubnets.push(this.indexOf(subnet));
    const parentKind = this.parentKinds.get(device.id);
    if (parentKind) this.emittedParents.add(device.id);
    return { subnet: subnet.cidr, kind: parentKind ?? 'device' };
  }

  /** A placed device's node. */
  deviceNode(device: TopologyDevice, placed: DevicePlacement): TopologyNode {
    return {
      id: `device:${device.id}`,
      kind: placed.kind,
      device_id: device.id,
      label: deviceLabel(device),
      device_type: device.device_type,
      risk_level: device.risk_level,
      online: device.online,
      zone: device.zone,
      subnet: placed.subnet,
      ip_address: device.ip_address,
      device_count: null,
    };
  }

  private tally(subnet: Subnet, risk: RiskLevel, online: boolean, count: number): void {
    subnet.count += count;
    if (online) subnet.online += count;
    subnet.risks[risk] = (subnet.risks[risk] ?? 0) + count;
    subnet.risk = subnet.risk ? worse(subnet.risk, risk) : risk;
    this.indexOf(subnet);
  }

  /** The overview: devices counted into their subnets without a node or edge of their own (a gateway device only draws its subnet). */
  countDevices(devices: readonly TopologyDevice[]): void {
    for (const device of devices) {
      const subnet = this.subnetOf(device.ip_sort);
      if (this.gatewayDeviceIds.has(device.id)) this.indexOf(subnet);
      else this.tally(subnet, device.risk_level, device.online, 1);
    }
  }

  /** Which subnets are drawn: those with devices, and the known networks when empty ones are shown. */
  private drawnSubnets(): Subnet[] {
    const drawn = new Set<Subnet>(this.subnetList);
    if (this.context.showEmptyNetworks) {
      for (const subnet of this.known) {
        if (subnet.source === 'scan') continue;
        if (this.within && !overlaps(subnet, this.within)) continue;
        drawn.add(subnet);
      }
    }
    return [...drawn].sort((a, b) => a.low - b.low || a.prefix - b.prefix);
  }

  private agentOf(subnet: Subnet): TopologyAgent | null {
    let best: { agent: TopologyAgent; prefix: number } | null = null;
    for (const agent of this.context.agents) {
      for (const network of agent.networks) {
        const range = rangeOf(network);
        if (!range || subnet.low < range.low || subnet.high > range.high) continue;
        if (!best || range.prefix > best.prefix) best = { agent, prefix: range.prefix };
      }
    }
    return best?.agent ?? null;
  }

  /** The chain above each drawn subnet, worked out once for lastNodes() and edges(). */
  private structure: { nodes: TopologyNode[]; edges: TopologyEdge[] } | null = null;

  private upper(): { nodes: TopologyNode[]; edges: TopologyEdge[] } {
    if (this.structure) return this.structure;
    const nodes: TopologyNode[] = [];
    const edges: TopologyEdge[] = [];
    const drawnGateways = new Set<Gateway>();
    const drawnAgents = new Set<TopologyAgent>();
    const gatewayNode = (gateway: Gateway): TopologyNode => ({
      id: gateway.id,
      kind: 'gateway',
      device_id: gateway.device?.id ?? null,
      label: gateway.device ? deviceLabel(gateway.device) : `Gateway ${gateway.ip}`,
      device_type: gateway.device?.device_type ?? 'router',
      risk_level: gateway.device?.risk_level ?? null,
      online: gateway.device?.online ?? true,
      zone: gateway.device?.zone ?? null,
      subnet: gateway.subnet?.cidr ?? null,
      ip_address: gateway.ip,
      device_count: null,
    });
    const defaultGateway = this.defaultGateway;
    const drawDefault = () => {
      if (!defaultGateway || drawnGateways.has(defaultGateway)) return;
      drawnGateways.add(defaultGateway);
      nodes.push(gatewayNode(defaultGateway));
      edges.push({ source: 'internet', target: defaultGateway.id, kind: 'uplink', evidence: 'confirmed' });
    };
    /** The node above whatever a subnet's own gateway (or the subnet) leads to, drawn if needed. */
    const above = (subnet: Subnet): { id: string; kind: TopologyEdgeKind; evidence: TopologyEvidence } => {
      const agent = this.agentOf(subnet);
      if (agent) {
        if (!drawnAgents.has(agent)) {
          drawnAgents.add(agent);
          nodes.push({
            id: `agent:${agent.id}`,
            kind: 'agent',
            device_id: null,
            label: agent.name,
            device_type: null,
            risk_level: null,
            online: agent.online,
            zone: null,
            subnet: null,
            ip_address: null,
            device_count: null,
          });
          edges.push({ source: 'internet', target: `agent:${agent.id}`, kind: 'uplink', evidence: 'inferred' });
        }
        return { id: `agent:${agent.id}`, kind: 'l3', evidence: 'confirmed' };
      }
      if (defaultGateway) {
        drawDefault();
        return { id: defaultGateway.id, kind: 'l3', evidence: 'inferred' };
      }
      return { id: 'internet', kind: 'uplink', evidence: 'inferred' };
    };
    for (const subnet of this.drawnSubnets()) {
      const id = `subnet:${subnet.cidr}`;
      nodes.push({
        id,
        kind: 'subnet',
        device_id: null,
        label: subnet.cidr,
        device_type: null,
        risk_level: subnet.risk,
        online: true,
        zone: null,
        subnet: subnet.cidr,
        ip_address: null,
        device_count: subnet.count,
        online_count: subnet.online,
        risk_counts: { ...subnet.risks },
      });
      const gateway = this.gatewayOfSubnet.get(subnet.cidr);
      if (gateway === defaultGateway && defaultGateway) {
        drawDefault();
        edges.push({ source: defaultGateway.id, target: id, kind: 'l3', evidence: 'confirmed' });
      } else if (gateway) {
        drawnGateways.add(gateway);
        nodes.push(gatewayNode(gateway));
        const up = above(subnet);
        edges.push({ source: up.id, target: gateway.id, kind: up.kind, evidence: up.evidence });
        edges.push({ source: gateway.id, target: id, kind: 'l3', evidence: 'inferred' });
      } else {
        const up = above(subnet);
        edges.push({ source: up.id, target: id, kind: up.kind, evidence: up.evidence });
      }
    }
    this.structure = { nodes, edges };
    return this.structure;
  }

  /** The subnet, gateway and agent nodes: after every page of devices. */
  lastNodes(): TopologyNode[] {
    return this.upper().nodes;
  }

  /** The structure's edges (internet, gateways, agents, subnets): the first of edges(). */
  upperEdges(): TopologyEdge[] {
    return this.upper().edges;
  }

  /**
   * The edge up from a placed device when a source places it under a switch or access point
   * drawn in this answer; null when it hangs off its subnet (`subnet:<cidr>` → device, l2,
   * inferred). After every device was placed; edges() gives the same.
   */
  attachedEdge(deviceId: number): TopologyEdge | null {
    const attachment = this.parentOf.get(deviceId);
    if (!attachment || !this.emittedParents.has(attachment.parent_device_id)) return null;
    return {
      source: `device:${attachment.parent_device_id}`,
      target: `device:${deviceId}`,
      kind: attachment.kind,
      evidence: 'confirmed',
      ...(attachment.source ? { confirmed_by: attachment.source } : {}),
    };
  }

  /** Every edge, a chunk at a time: the structure's, then one up from each device. */
  *edges(chunk = 1000): Generator<TopologyEdge[]> {
    yield this.upper().edges;
    let page: TopologyEdge[] = [];
    for (let i = 0; i < this.deviceIds.length; i++) {
      const id = this.deviceIds[i];
      const attached = this.attachedEdge(id);
      if (attached) page.push(attached);
      else {
        page.push({ source: `subnet:${this.subnetList[this.deviceSubnets[i]].cidr}`, target: `device:${id}`, kind: 'l2', evidence: 'inferred' });
      }
      if (page.length >= chunk) {
        yield page;
        page = [];
      }
    }
    if (page.length > 0) yield page;
  }
}

/** The whole map at once (tests, small inventories): the builder run over one list of devices. */
export function buildTopology(context: TopologyContext, devices: readonly TopologyDevice[]): { nodes: TopologyNode[]; edges: TopologyEdge[] } {
  const builder = new TopologyBuilder(context);
  const nodes = [...builder.firstNodes(), ...builder.deviceNodes(devices), ...builder.lastNodes()];
  const edges = [...builder.edges()].flat();
  return { nodes, edges };
}

/** The gateway of the default route in a /proc/net/route table (lowest metric), as a dotted address; null when none. */
export function defaultGatewayFromProcRoute(table: string): string | null {
  let best: { gateway: string; metric: number } | null = null;
  for (const line of table.split('\n').slice(1)) {
    const [iface, destination, gateway, flags, , , metric, mask] = line.trim().split(/\s+/);
    if (!iface || destination !== '00000000' || mask !== '00000000' || !gateway || !/^[0-9A-Fa-f]{8}$/.test(gateway)) continue;
    // RTF_UP (1) and RTF_GATEWAY (2).
    if ((Number.parseInt(flags ?? '0', 16) & 3) !== 3) continue;
    // The kernel writes the address in host (little-endian) byte order.
    const value = Number.parseInt(gateway, 16);
    const address = [value & 0xff, (value >>> 8) & 0xff, (value >>> 16) & 0xff, (value >>> 24) & 0xff].join('.');
    if (address === '0.0.0.0') continue;
    const m = Number(metric ?? 0);
    if (!best || m < best.metric) best = { gateway: address, metric: m };
  }
  return best?.gateway ?? null;
}
