// The Map page's drawing plan, worked out without the graph library: which nodes are drawn (subnets
// collapsed into one node each unless expanded, devices filtered by risk), where each goes (fixed
// positions, so no force layout runs over thousands of nodes), and the map as an SVG file.
import type { Topology } from './types';

export type MapNode = Topology['nodes'][number];
export type MapEdge = Topology['edges'][number];

/** Below this many devices every subnet starts expanded; above, they start collapsed. */
export const AUTO_EXPAND_DEVICES = 400;

const LAYER_GAP = 120;
const CELL = 64;
const SUBNET_WIDTH = 190;
const BLOCK_GAP = 48;

export interface MapView {
  /** Subnet node ids drawn with their devices. */
  expanded: ReadonlySet<string>;
  /** Only devices of this risk level ('' for all). */
  risk: string;
  /**
   * Subnet node ids whose devices are in the graph (fetched when opened); the others are drawn from
   * their counts (the overview's `device_count`, `online_count`, `risk_counts`). Absent: all are.
   */
  loaded?: ReadonlySet<string>;
}

export interface PlacedNode {
  node: MapNode;
  x: number;
  y: number;
  /** Subnets: devices matching the filters inside it. */
  count?: number;
  expanded?: boolean;
}

export interface MapPlan {
  nodes: PlacedNode[];
  edges: MapEdge[];
  /** Devices matching the filters, in all subnets (drawn or not). */
  devices: number;
  /** Of them offline (with a risk filter, only those of loaded subnets are known). */
  offline: number;
}

const MEMBER_KINDS = new Set(['device', 'switch', 'access_point']);

export const isMember = (node: MapNode): boolean => MEMBER_KINDS.has(node.kind);

/** The subnet node each device belongs to (its chain up through switches and access points). */
export function subnetOfMembers(graph: Topology): Map<string, string> {
  const up = new Map(graph.edges.map((e) => [e.target, e.source]));
  const kind = new Map(graph.nodes.map((n) => [n.id, n.kind]));
  const result = new Map<string, string>();
  for (const node of graph.nodes) {
    if (!isMember(node)) continue;
    let at = up.get(node.id);
    for (let hops = 0; at && kind.get(at) !== 'subnet' && hops < 16; hops++) at = up.get(at);
    if (at) result.set(node.id, at);
  }
  return result;
}

/**
 * Places the drawn nodes: the layers above the subnets (internet, gateways, agents) each centred
 * over the subnets under it; subnets as blocks packed in rows, an expanded one holding its devices
 * in a grid under it. Subnets under the same parent stay together.
 */
export function planMap(graph: Topology, view: MapView, memberSubnet = subnetOfMembers(graph)): MapPlan {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const up = new Map(graph.edges.map((e) => [e.target, e]));
  const children = new Map<string, string[]>();
  for (const edge of graph.edges) {
    const list = children.get(edge.source);
    if (list) list.push(edge.target);
    else children.set(edge.source, [edge.target]);
  }
  const matches = (n: MapNode) => !view.risk || n.risk_level === view.risk;

  // Members of each subnet, in the order met going down (a switch before its clients).
  const members = new Map<string, MapNode[]>();
  let devices = 0;
  let offline = 0;
  for (const node of graph.nodes) {
    if (!isMember(node) || !matches(node)) continue;
    devices++;
    if (!node.online) offline++;
    const subnet = memberSubnet.get(node.id);
    if (!subnet) continue;
    const list = members.get(subnet);
    if (list) list.push(node);
    else members.set(subnet, [node]);
  }

  // Subnets not loaded: their devices counted by the server.
  const counted = new Map<string, number>();
  if (view.loaded) {
    for (const node of graph.nodes) {
      if (node.kind !== 'subnet' || view.loaded.has(node.id)) continue;
      const count = view.risk ? (node.risk_counts?.[view.risk as keyof NonNullable<MapNode['risk_counts']>] ?? 0) : (node.device_count ?? 0);
      counted.set(node.id, count);
      devices += count;
      if (!view.risk) offline += count - (node.online_count ?? count);
    }
  }

  // Subnets in the order a walk from the internet meets them; depth of every upper node.
  const depth = new Map<string, number>();
  const subnets: string[] = [];
  const walk = (id: string, d: number) => {
    depth.set(id, d);
    const node = byId.get(id);
    if (node?.kind === 'subnet') {
      subnets.push(id);
      return;
    }
    const below = (children.get(id) ?? []).filter((c) => !isMember(byId.get(c)!));
    below.sort((a, b) => (byId.get(a)!.kind === 'subnet' ? 1 : 0) - (byId.get(b)!.kind === 'subnet' ? 1 : 0) || a.localeCompare(b));
    for (const child of below) walk(child, d + 1);
  };
  walk('internet', 0);
  const subnetDepth = Math.max(1, ...subnets.map((s) => depth.get(s) ?? 1));
  const top = subnetDepth * LAYER_GAP;

  // Blocks: a collapsed subnet is one node; an expanded one a grid of its devices.
  const blocks = subnets.map((id) => {
    const list = members.get(id) ?? [];
    const expanded = view.expanded.has(id) && list.length > 0;
    const columns = expanded ? Math.max(3, Math.ceil(Math.sqrt(list.length * 2))) : 1;
    const rows = expanded ? Math.ceil(list.length / columns) : 0;
    return {
      id,
      list,
      count: counted.get(id) ?? list.length,
      expanded,
      columns,
      width: Math.max(SUBNET_WIDTH, columns * CELL),
      height: 60 + rows * CELL,
    };
  });
  const area = blocks.reduce((sum, b) => sum + (b.width + BLOCK_GAP) * (b.height + BLOCK_GAP), 0);
  const rowWidth = Math.max(1200, Math.sqrt(area) * 1.6, ...blocks.map((b) => b.width));

  const placed: PlacedNode[] = [];
  const xOf = new Map<string, number>();
  let x = 0;
  let y = top;
  let rowHeight = 0;
  for (const block of blocks) {
    if (x > 0 && x + block.width > rowWidth) {
      x = 0;
      y += rowHeight + BLOCK_GAP;
      rowHeight = 0;
    }
    const centre = x + block.width / 2;
    xOf.set(block.id, centre);
    placed.push({ node: byId.get(block.id)!, x: centre, y, count: block.count, expanded: block.expanded });
    if (block.expanded) {
      const left = centre - ((block.columns - 1) * CELL) / 2;
      block.list.forEach((node, i) => {
        placed.push({ node, x: left + (i % block.columns) * CELL, y: y + 70 + Math.floor(i / block.columns) * CELL });
      });
    }
    x += block.width + BLOCK_GAP;
    rowHeight = Math.max(rowHeight, block.height);
  }

  // Upper nodes: centred over the subnets below them, deepest first.
  const upper = [...depth.keys()].filter((id) => byId.get(id)?.kind !== 'subnet').sort((a, b) => depth.get(b)! - depth.get(a)!);
  let spare = 0;
  for (const id of upper) {
    const below = (children.get(id) ?? []).map((c) => xOf.get(c)).filter((v): v is number => v !== undefined);
    const at = below.length > 0 ? (Math.min(...below) + Math.max(...below)) / 2 : (spare += SUBNET_WIDTH);
    xOf.set(id, at);
    placed.push({ node: byId.get(id)!, x: at, y: depth.get(id)! * LAYER_GAP });
  }

  const drawn = new Set(placed.map((p) => p.node.id));
  const edges = graph.edges.filter((e) => drawn.has(e.source) && drawn.has(e.target));
  // A device whose switch is filtered out still shows its link to the subnet.
  for (const p of placed) {
    if (!isMember(p.node)) continue;
    const edge = up.get(p.node.id);
    if (edge && !drawn.has(edge.source)) {
      const subnet = memberSubnet.get(p.node.id);
      if (subnet) edges.push({ source: subnet, target: p.node.id, kind: 'l2', evidence: 'inferred', confirmed_by: null });
    }
  }
  return { nodes: placed, edges, devices, offline };
}

/** A dotted IPv4 address as a number, or null. */
export const ipv4 = (text: string): number | null => {
  const parts = text.split('.').map(Number);
  return parts.length === 4 && parts.every((p) => Number.isInteger(p) && p >= 0 && p <= 255)
    ? ((parts[0] * 256 + parts[1]) * 256 + parts[2]) * 256 + parts[3]
    : null;
};

/** The narrowest of the subnet nodes (labelled by their CIDR) holding the address, or null. */
export function subnetHolding(subnets: readonly MapNode[], address: string): MapNode | null {
  const ip = ipv4(address);
  if (ip === null) return null;
  let best: { node: MapNode; prefix: number } | null = null;
  for (const node of subnets) {
    const [network, bits] = (node.subnet ?? node.label).split('/');
    const low = ipv4(network ?? '');
    const prefix = Number(bits);
    if (low === null || !Number.isInteger(prefix) || prefix < 0 || prefix > 32) continue;
    const size = 2 ** (32 - prefix);
    if (ip >= low && ip < low + size && (!best || prefix > best.prefix)) best = { node, prefix };
  }
  return best?.node ?? null;
}

export interface SvgColours {
  background: string;
  text: string;
  line: string;
  offline: string;
  risk: Record<string, string>;
  structure: string;
}

const escapeXml = (text: string) => text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The drawn map as a standalone SVG document (nodes, edges in their evidence's line style, labels). */
export function mapSvg(plan: MapPlan, colours: SvgColours): string {
  const at = new Map(plan.nodes.map((p) => [p.node.id, p]));
  const xs = plan.nodes.map((p) => p.x);
  const ys = plan.nodes.map((p) => p.y);
  const pad = 80;
  const minX = Math.min(0, ...xs) - pad;
  const minY = Math.min(0, ...ys) - pad;
  const width = Math.max(...xs, 0) - minX + pad;
  const height = Math.max(...ys, 0) - minY + pad;
  const dash: Record<string, string> = { inferred: ' stroke-dasharray="2 4"', measured: ' stroke-dasharray="8 5"', confirmed: '' };
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="${minX} ${minY} ${width} ${height}" width="${Math.round(width)}" height="${Math.round(height)}" font-family="system-ui, sans-serif" font-size="11">`,
    `<rect x="${minX}" y="${minY}" width="${width}" height="${height}" fill="${colours.background}"/>`,
    `<g stroke="${colours.line}" stroke-width="1.5">`,
  ];
  for (const edge of plan.edges) {
    const a = at.get(edge.source);
    const b = at.get(edge.target);
    if (!a || !b) continue;
    out.push(
      `<line x1="${a.x}" y1="${a.y}" x2="${b.x}" y2="${b.y}"${dash[edge.evidence] ?? ''}><title>${edge.kind}, ${edge.evidence}</title></line>`,
    );
  }
  out.push('</g>');
  for (const p of plan.nodes) {
    const n = p.node;
    const fill = !n.online ? colours.offline : n.risk_level ? (colours.risk[n.risk_level] ?? colours.structure) : colours.structure;
    const label = escapeXml(n.kind === 'subnet' ? `${n.label} · ${p.count ?? 0}` : n.label);
    if (n.kind === 'subnet') {
      out.push(`<rect x="${p.x - 80}" y="${p.y - 18}" width="160" height="36" rx="8" fill="${fill}" fill-opacity="0.25" stroke="${fill}"/>`);
      out.push(`<text x="${p.x}" y="${p.y + 4}" text-anchor="middle" fill="${colours.text}">${label}</text>`);
    } else {
      out.push(
        `<circle cx="${p.x}" cy="${p.y}" r="13" fill="${fill}"${n.online ? '' : ' fill-opacity="0.5"'}><title>${escapeXml(`${n.label} (${n.kind})`)}</title></circle>`,
      );
      out.push(`<text x="${p.x}" y="${p.y + 27}" text-anchor="middle" fill="${colours.text}">${label}</text>`);
    }
  }
  out.push('</svg>');
  return out.join('\n');
}
