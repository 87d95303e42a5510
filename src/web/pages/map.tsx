// The network map (issue 22 §2): GET /api/visualization/topology drawn with cytoscape (MIT, its
// built-in renderer only, no layout plug-in): nodes by type icon and risk colour, offline greyed,
// edges drawn by evidence (confirmed solid, measured dashed, inferred dotted). The first paint is
// the overview (`detail=subnets`: no device, per-subnet counts); a subnet's devices are fetched
// when it is opened (`subnet=<cidr>`) and kept until the filters change or a scan finishes. Up to
// AUTO_EXPAND_DEVICES devices the whole map is fetched at once and starts open. So the page never
// asks for the whole graph of a large network. Positions are computed (map-layout.ts), never a
// force layout. A finished scan reloads the map in place.
import type { Core, ElementDefinition, NodeSingular, StylesheetJson } from 'cytoscape';
import { useLocation } from 'preact-iso';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { DEVICE_TYPE_INFO, isDeviceType } from '../../core/device-types.js';
import { answer, api, withQuery } from '../api';
import { EmptyState, ErrorMessage, Field, Loading, PageHeader, RiskBadge } from '../components/ui';
import { formatNumber, plural } from '../format';
import { useResource, useTitle } from '../hooks';
import { useRefreshOn } from '../live';
import {
  AUTO_EXPAND_DEVICES,
  ipv4,
  isMember,
  mapSvg,
  planMap,
  subnetHolding,
  subnetOfMembers,
  type MapEdge,
  type MapNode,
  type MapPlan,
  type SvgColours,
} from '../map-layout';
import { RISK_LEVELS, isOneOf, type Topology } from '../types';
import './map.css';

/** Above this many drawn elements, pan and zoom draw a cached picture of the map instead of every node. */
const LARGE_DRAWING = 1500;
/** Search results listed under the map (and asked of the server). */
const MATCHES_LISTED = 20;

/** A found device's name as the map labels it: its name, else its host name, else its address. */
const deviceLabel = (d: { name: string | null; hostname: string | null; ip_address: string }) => d.name ?? d.hostname ?? d.ip_address;

/** The devices of one subnet, as its own answer gave them. */
interface Part {
  nodes: MapNode[];
  edges: MapEdge[];
}
const NO_PARTS: ReadonlyMap<string, Part> = new Map();

/** An answer's devices split by the subnet they hang under; `subnets` all get a part, empty if none. */
function partsOf(graph: Topology, subnets: readonly string[]): Map<string, Part> {
  const parts = new Map<string, Part>(subnets.map((id) => [id, { nodes: [], edges: [] }]));
  const home = subnetOfMembers(graph);
  const partOf = (id: string) => {
    const subnet = home.get(id);
    if (!subnet) return undefined;
    let part = parts.get(subnet);
    if (!part) parts.set(subnet, (part = { nodes: [], edges: [] }));
    return part;
  };
  for (const node of graph.nodes) if (isMember(node)) partOf(node.id)?.nodes.push(node);
  for (const edge of graph.edges) if (home.has(edge.target)) partOf(edge.target)?.edges.push(edge);
  // In address order (the whole map comes in the order devices were added).
  const at = (n: MapNode) => ipv4(n.ip_address ?? '') ?? 0;
  for (const part of parts.values()) part.nodes.sort((a, b) => at(a) - at(b));
  return parts;
}

const cssVar = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/** The colours of the current theme, read from the stylesheet's variables. */
function themeColours(): SvgColours & { surface: string; accent: string } {
  return {
    background: cssVar('--surface') || '#ffffff',
    surface: cssVar('--surface-2') || '#f0f2f5',
    text: cssVar('--text') || '#1b1f24',
    line: cssVar('--muted') || '#5b6470',
    offline: cssVar('--border') || '#d9dde3',
    structure: cssVar('--accent') || '#2457c5',
    accent: cssVar('--accent') || '#2457c5',
    risk: Object.fromEntries(RISK_LEVELS.map((level) => [level, cssVar(`--${level}`) || '#888888'])),
  };
}

/** A device type's icon as an SVG image in `colour`. */
function iconUri(type: string, colour: string): string {
  const info = DEVICE_TYPE_INFO[isDeviceType(type) ? type : 'unknown'];
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="${colour}" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><path d="${info.icon}"/></svg>`;
  return `data:image/svg+xml;utf8,${encodeURIComponent(svg)}`;
}

function stylesheet(colours: ReturnType<typeof themeColours>): StylesheetJson {
  const icon = '#ffffff';
  return [
    {
      selector: 'node',
      style: {
        width: 30,
        height: 30,
        'background-color': colours.structure,
        label: 'data(label)',
        color: colours.text,
        'font-size': 10,
        'text-valign': 'bottom',
        'text-margin-y': 4,
        'text-wrap': 'ellipsis',
        'text-max-width': '110px',
        'min-zoomed-font-size': 8,
        'background-width': '62%',
        'background-height': '62%',
      },
    },
    ...RISK_LEVELS.map((level) => ({ selector: `node.risk-${level}`, style: { 'background-color': colours.risk[level] } })),
    { selector: 'node.offline', style: { 'background-color': colours.offline, opacity: 0.55 } },
    ...Object.keys(DEVICE_TYPE_INFO).map((type) => ({ selector: `node[type = "${type}"]`, style: { 'background-image': iconUri(type, icon) } })),
    {
      selector: 'node[kind = "subnet"]',
      style: {
        shape: 'round-rectangle',
        width: 170,
        height: 40,
        'text-valign': 'center',
        'text-margin-y': 0,
        'text-wrap': 'wrap',
        'text-max-width': '160px',
        'font-size': 11,
        'background-opacity': 0.18,
        'border-width': 2,
        'border-color': colours.structure,
        'min-zoomed-font-size': 4,
      },
    },
    ...RISK_LEVELS.map((level) => ({ selector: `node[kind = "subnet"].risk-${level}`, style: { 'border-color': colours.risk[level] } })),
    { selector: 'node[kind = "subnet"].expanded', style: { 'border-style': 'double', 'border-width': 4 } },
    { selector: 'node[kind = "internet"]', style: { shape: 'ellipse', width: 44, height: 44, 'background-color': colours.accent } },
    { selector: 'node[kind = "gateway"], node[kind = "agent"]', style: { shape: 'round-diamond', width: 38, height: 38 } },
    { selector: 'node[kind = "switch"], node[kind = "access_point"]', style: { shape: 'round-hexagon', width: 34, height: 34 } },
    { selector: 'node:selected', style: { 'border-width': 4, 'border-color': colours.accent, 'border-style': 'solid' } },
    { selector: 'edge', style: { width: 1.5, 'line-color': colours.line, 'curve-style': 'straight', opacity: 0.8 } },
    { selector: 'edge[evidence = "inferred"]', style: { 'line-style': 'dotted' } },
    { selector: 'edge[evidence = "measured"]', style: { 'line-style': 'dashed' } },
    { selector: 'edge[evidence = "confirmed"]', style: { width: 2.5 } },
    { selector: 'edge[kind = "wifi"]', style: { 'line-color': colours.accent } },
    // The many subnet-to-device links stay faint: the devices' grid already says where they belong.
    { selector: 'edge[kind = "l2"][evidence = "inferred"]', style: { width: 1, opacity: 0.35 } },
  ] as StylesheetJson;
}

function elementsOf(plan: MapPlan, memberSubnet: ReadonlyMap<string, string>): ElementDefinition[] {
  const nodes: ElementDefinition[] = plan.nodes.map(({ node, x, y, count, expanded }) => ({
    group: 'nodes',
    data: {
      id: node.id,
      kind: node.kind,
      type: isMember(node) || node.kind === 'gateway' ? (node.device_type ?? 'unknown') : undefined,
      device_id: node.device_id ?? undefined,
      home: memberSubnet.get(node.id),
      label: node.kind === 'subnet' ? `${node.label}\n${formatNumber(count ?? 0)} ${count === 1 ? 'device' : 'devices'}` : node.label,
    },
    position: { x, y },
    classes: [node.risk_level ? `risk-${node.risk_level}` : '', node.online ? '' : 'offline', expanded ? 'expanded' : ''].join(' ').trim(),
    grabbable: false,
  }));
  const edges: ElementDefinition[] = plan.edges.map((e) => ({
    group: 'edges',
    data: { id: `${e.source}>${e.target}`, source: e.source, target: e.target, kind: e.kind, evidence: e.evidence },
  }));
  return [...nodes, ...edges];
}

function download(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Bumps when the theme changes (the `data-theme` attribute of the page), so the map re-reads its colours. */
function useThemeVersion(): number {
  const [version, setVersion] = useState(0);
  useEffect(() => {
    const observer = new MutationObserver(() => setVersion((v) => v + 1));
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
    const media = window.matchMedia('(prefers-color-scheme: dark)');
    const changed = () => setVersion((v) => v + 1);
    media.addEventListener('change', changed);
    return () => {
      observer.disconnect();
      media.removeEventListener('change', changed);
    };
  }, []);
  return version;
}

export function MapPage() {
  useTitle('Map');
  const { query, path, route } = useLocation();
  const subnet = query.subnet || undefined;
  const zone = query.zone || undefined;
  const risk = isOneOf(RISK_LEVELS, query.risk) ? query.risk : '';
  const set = (next: Record<string, string | undefined>) => route(withQuery(path, { subnet, zone, risk: risk || undefined, ...next }), true);

  const filterKey = `${subnet ?? ''}|${zone ?? ''}`;
  // The overview first. Each answer carries the filters it was asked with: until the new one arrives the old map stays on screen, unfitted.
  const overview = useResource(
    async (signal) => ({
      key: filterKey,
      graph: await answer(api.GET('/api/visualization/topology', { params: { query: { subnet, zone, detail: 'subnets' } }, signal })),
    }),
    [subnet, zone],
  );
  const zones = useResource((signal) => answer(api.GET('/api/zones', { signal })), []);
  useRefreshOn(['scan_finished'], overview.reload);

  const outline = overview.data?.graph;
  const graphKey = overview.data?.key;
  const subnets = useMemo(() => (outline ? outline.nodes.filter((n) => n.kind === 'subnet') : []), [outline]);
  const deviceTotal = useMemo(() => subnets.reduce((sum, s) => sum + (s.device_count ?? 0), 0), [subnets]);
  /** A small map is fetched whole and starts open; a large one a subnet at a time. */
  const whole = outline !== undefined && deviceTotal <= AUTO_EXPAND_DEVICES;

  // The subnets opened for these filters; until one is opened or closed, small maps start open and large ones as clusters.
  const [opened, setOpened] = useState<{ key: string; ids: ReadonlySet<string> } | null>(null);
  const initial = useMemo<ReadonlySet<string>>(() => (whole ? new Set(subnets.map((n) => n.id)) : new Set()), [whole, subnets]);
  const expanded = opened && opened.key === graphKey ? opened.ids : initial;
  // Functional: several subnets opened before the next render all stay open.
  const setExpanded = (change: (before: ReadonlySet<string>) => ReadonlySet<string>) => {
    if (graphKey === undefined) return;
    setOpened((before) => ({ key: graphKey, ids: change(before && before.key === graphKey ? before.ids : initial) }));
  };
  /** The subnet just opened: the view moves to it once its devices are drawn. */
  const justOpened = useRef<string | null>(null);

  // Devices of the opened subnets, fetched on demand and kept for this overview (a new one, after a scan or other filters, starts afresh).
  const [fetched, setFetched] = useState<{ of: Topology | undefined; parts: ReadonlyMap<string, Part> }>({ of: undefined, parts: NO_PARTS });
  const [partError, setPartError] = useState<unknown>(null);
  const requested = useRef<{ of: Topology | undefined; ids: Set<string> }>({ of: undefined, ids: new Set() });
  const parts = fetched.of === outline ? fetched.parts : NO_PARTS;
  const [retries, setRetries] = useState(0);
  useEffect(() => {
    if (!outline) return;
    if (requested.current.of !== outline) requested.current = { of: outline, ids: new Set() };
    const asked = requested.current.ids;
    const keep = (more: Map<string, Part>) => {
      if (requested.current.of !== outline) return;
      setFetched((before) => ({ of: outline, parts: new Map([...(before.of === outline ? before.parts : []), ...more]) }));
    };
    const failed = (ids: string[]) => (error: unknown) => {
      for (const id of ids) asked.delete(id);
      if (requested.current.of === outline && !(error instanceof DOMException && error.name === 'AbortError')) setPartError(error);
    };
    if (whole) {
      if (asked.size > 0) return;
      const ids = subnets.map((n) => n.id);
      for (const id of ids) asked.add(id);
      answer(api.GET('/api/visualization/topology', { params: { query: { subnet, zone } } })).then((graph) => keep(partsOf(graph, ids)), failed(ids));
      return;
    }
    for (const id of expanded) {
      const node = subnets.find((n) => n.id === id);
      if (!node || asked.has(id) || parts.has(id) || (node.device_count ?? 0) === 0) continue;
      asked.add(id);
      answer(api.GET('/api/visualization/topology', { params: { query: { subnet: node.label, zone } } })).then(
        (graph) => keep(partsOf(graph, [id])),
        failed([id]),
      );
    }
  }, [outline, whole, expanded, subnets, parts, subnet, zone, retries]);

  /** The overview with the fetched subnets' devices. */
  const graph = useMemo<Topology | undefined>(() => {
    if (!outline) return undefined;
    const list = [...parts.values()];
    return { nodes: [...outline.nodes, ...list.flatMap((p) => p.nodes)], edges: [...outline.edges, ...list.flatMap((p) => p.edges)] };
  }, [outline, parts]);
  const loaded = useMemo<ReadonlySet<string>>(() => new Set(parts.keys()), [parts]);
  const memberSubnet = useMemo(() => (graph ? subnetOfMembers(graph) : new Map<string, string>()), [graph]);

  const plan = useMemo(
    () => (graph ? planMap(graph, { expanded, risk, loaded }, memberSubnet) : null),
    [graph, expanded, risk, loaded, memberSubnet],
  );
  const [search, setSearch] = useState('');
  const [matchIndex, setMatchIndex] = useState(-1);
  const term = search.trim();
  // Devices found by the server's search (GET /api/devices?q=) under the map's own filters (subnet, zone), so the first
  // matches it lists are all on this map; kept to the subnets drawn.
  const found = useResource(
    async (signal) =>
      term ? await answer(api.GET('/api/devices', { params: { query: { q: term, subnet, zone, limit: MATCHES_LISTED + 1 } }, signal })) : [],
    [term, subnet, zone],
  );
  const matches = useMemo(
    () =>
      (found.data ?? [])
        .map((d) => ({ device: d, home: subnetHolding(subnets, d.ip_address) }))
        .filter((m): m is { device: (typeof m)['device']; home: MapNode } => m.home !== null),
    [found.data, subnets],
  );
  const focus = useRef<string | null>(null);
  const toggle = (id: string) =>
    setExpanded((before) => {
      const next = new Set(before);
      if (next.has(id)) next.delete(id);
      else {
        next.add(id);
        justOpened.current = id;
      }
      return next;
    });

  const findNext = (event: Event) => {
    event.preventDefault();
    if (matches.length === 0) return;
    const index = (matchIndex + 1) % Math.min(matches.length, MATCHES_LISTED);
    setMatchIndex(index);
    const { device, home } = matches[index];
    // A gateway is drawn as its gateway node, everything else as its device node.
    const gateway = outline?.nodes.find((n) => n.kind === 'gateway' && n.device_id === device.id);
    const id = gateway ? gateway.id : `device:${device.id}`;
    focus.current = id;
    if (!gateway && !expanded.has(home.id)) setExpanded((before) => new Set([...before, home.id]));
    else if (cyRef.current && cyRef.current.getElementById(id).nonempty()) {
      focusOn(cyRef.current, id);
      focus.current = null;
    }
  };

  // The graph library is loaded with the page that needs it (its own chunk).
  const container = useRef<HTMLDivElement>(null);
  const cyRef = useRef<Core | null>(null);
  const [ready, setReady] = useState(false);
  const themeVersion = useThemeVersion();
  // eslint-disable-next-line react-hooks/exhaustive-deps -- the colours are the stylesheet's: read again when the theme changes
  const colours = useMemo(() => themeColours(), [themeVersion]);
  const handlers = useRef({ toggle, open: (id: number) => route(`/devices/${id}`) });
  handlers.current = { toggle, open: (id: number) => route(`/devices/${id}`) };

  useEffect(() => {
    let cy: Core | null = null;
    let cancelled = false;
    void import('cytoscape').then(({ default: cytoscape }) => {
      if (cancelled || !container.current) return;
      cy = cytoscape({
        container: container.current,
        style: stylesheet(themeColours()),
        layout: { name: 'preset' },
        minZoom: 0.02,
        maxZoom: 4,
        boxSelectionEnabled: false,
        autoungrabify: true,
      });
      cy.on('tap', 'node', (event) => {
        const data = (event.target as NodeSingular).data() as { kind: string; id: string; device_id?: number };
        if (data.kind === 'subnet') handlers.current.toggle(data.id);
        else if (data.device_id !== undefined) handlers.current.open(data.device_id);
      });
      cyRef.current = cy;
      setReady(true);
    });
    return () => {
      cancelled = true;
      cy?.destroy();
      cyRef.current = null;
    };
  }, []);

  useEffect(() => {
    cyRef.current?.style(stylesheet(colours));
  }, [colours, ready]);

  // Fitted once per filters; a small map again when its devices (fetched whole, open) have come.
  const fitKey = graphKey === undefined ? undefined : `${graphKey}|${whole && subnets.some((s) => !loaded.has(s.id)) ? 'outline' : 'drawn'}`;
  const fitted = useRef<string | null>(null);
  useEffect(() => {
    const cy = cyRef.current;
    if (!cy || !plan) return;
    const elements = elementsOf(plan, memberSubnet);
    const large = elements.length > LARGE_DRAWING;
    // Big drawings pan and zoom as a picture; small ones stay sharp.
    const renderer = cy as unknown as { renderer(): { textureOnViewport: boolean; hideEdgesOnViewport: boolean } };
    const options = renderer.renderer();
    options.textureOnViewport = large;
    options.hideEdgesOnViewport = large;
    cy.batch(() => {
      cy.elements().remove();
      cy.add(elements);
    });
    if (fitKey !== undefined && fitted.current !== fitKey) {
      fitted.current = fitKey;
      cy.fit(undefined, 30);
    } else if (justOpened.current) {
      // Once its devices are in (they may still be on their way).
      const members = cy.nodes(`[home = "${justOpened.current}"]`);
      if (members.nonempty()) {
        cy.fit(members.union(cy.getElementById(justOpened.current)), 40);
        justOpened.current = null;
      } else if (!expanded.has(justOpened.current) || loaded.has(justOpened.current)) justOpened.current = null;
    }
    if (focus.current && cy.getElementById(focus.current).nonempty()) {
      focusOn(cy, focus.current);
      focus.current = null;
    }
  }, [plan, ready, fitKey, memberSubnet, expanded, loaded]);

  const exportName = `netwarden-map-${new Date().toISOString().slice(0, 10)}`;
  const exportPng = async () => {
    const cy = cyRef.current;
    if (!cy) return;
    const blob = await cy.png({ output: 'blob-promise', bg: colours.background, full: true, scale: 1, maxWidth: 8000, maxHeight: 8000 });
    download(blob, `${exportName}.png`);
  };
  const exportSvg = () => plan && download(new Blob([mapSvg(plan, colours)], { type: 'image/svg+xml' }), `${exportName}.svg`);
  const counts = useMemo(() => new Map((plan?.nodes ?? []).filter((p) => p.node.kind === 'subnet').map((p) => [p.node.id, p.count ?? 0])), [plan]);

  return (
    <>
      <PageHeader title="Map">
        <button type="button" onClick={exportSvg} disabled={!plan}>
          SVG
        </button>
        <button type="button" onClick={() => void exportPng()} disabled={!plan || !ready}>
          PNG
        </button>
        <a class="button" href={withQuery('/api/visualization/topology', { subnet, zone })} download={`${exportName}.json`}>
          JSON
        </a>
      </PageHeader>
      <form class="filters map-filters" aria-label="Map filters" onSubmit={findNext}>
        <Field label="Subnet">
          <input
            list="map-subnets"
            value={subnet ?? ''}
            placeholder="All"
            inputMode="decimal"
            onChange={(e) => set({ subnet: e.currentTarget.value.trim() || undefined })}
          />
        </Field>
        <datalist id="map-subnets">
          {subnets.map((s) => (
            <option key={s.id} value={s.label} />
          ))}
        </datalist>
        <Field label="Zone">
          <select value={zone ?? ''} onChange={(e) => set({ zone: e.currentTarget.value || undefined })}>
            <option value="">All zones</option>
            {(zones.data ?? []).map((z) => (
              <option key={z} value={z}>
                {z}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Risk">
          <select value={risk} onChange={(e) => set({ risk: e.currentTarget.value || undefined })}>
            <option value="">Any risk</option>
            {RISK_LEVELS.map((level) => (
              <option key={level} value={level}>
                {level === 'none' ? 'No risk' : level[0].toUpperCase() + level.slice(1)}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Find">
          <input
            type="search"
            value={search}
            placeholder="Name, address or type"
            onInput={(e) => {
              setSearch(e.currentTarget.value);
              setMatchIndex(-1);
            }}
          />
        </Field>
        <button type="submit" disabled={matches.length === 0}>
          Find next
        </button>
      </form>
      <ErrorMessage error={overview.error} onRetry={overview.reload} />
      <ErrorMessage
        error={partError}
        onRetry={() => {
          setPartError(null);
          setRetries((r) => r + 1);
        }}
      />
      {overview.loading && !graph && <Loading label="Drawing the map…" />}
      {plan && (
        <p class="map-summary" aria-live="polite">
          {plural(plan.devices, 'device')} in {plural(subnets.length, 'subnet')}
          {plan.offline > 0 ? ` · ${formatNumber(plan.offline)} offline` : ''}
          {deviceTotal > AUTO_EXPAND_DEVICES ? ' · select a subnet to open it' : ''}
          {term && !found.loading
            ? ` · ${matches.length > MATCHES_LISTED ? `more than ${MATCHES_LISTED} matches` : plural(matches.length, 'match', 'matches')}`
            : ''}
        </p>
      )}
      {graph && deviceTotal === 0 && subnets.length === 0 && (
        <EmptyState title="Nothing to draw">Run a scan (or pick other filters): the map shows the devices scans have found.</EmptyState>
      )}
      <div class="map-canvas" ref={container} role="img" aria-label="Network map: select a subnet to open or close it, a device to see it" />
      <ul class="map-legend" aria-label="Legend">
        <li>
          <span class="legend-line confirmed" /> confirmed
        </li>
        <li>
          <span class="legend-line measured" /> measured
        </li>
        <li>
          <span class="legend-line inferred" /> inferred
        </li>
        <li>
          <span class="legend-dot offline" /> offline
        </li>
      </ul>
      {term && matches.length > 0 && (
        <section class="card" aria-label="Matches">
          <ul class="map-matches">
            {matches.slice(0, MATCHES_LISTED).map(({ device }) => (
              <li key={device.id}>
                <a href={`/devices/${device.id}`}>{deviceLabel(device)}</a> <span class="muted">{device.ip_address}</span>
              </li>
            ))}
          </ul>
          {matches.length > MATCHES_LISTED && <p class="muted">and more: type more of the name</p>}
        </section>
      )}
      {subnets.length > 0 && (
        <details class="card map-subnets">
          <summary>Subnets ({formatNumber(subnets.length)})</summary>
          <ul>
            {subnets.map((s) => (
              <li key={s.id}>
                <button type="button" class="small-button" aria-pressed={expanded.has(s.id)} onClick={() => toggle(s.id)}>
                  {expanded.has(s.id) ? 'Close' : 'Open'} {s.label}
                </button>{' '}
                {plural(counts.get(s.id) ?? 0, 'device')} {s.risk_level && <RiskBadge level={s.risk_level} />}
              </li>
            ))}
          </ul>
        </details>
      )}
    </>
  );
}

function focusOn(cy: Core, id: string): void {
  const node = cy.getElementById(id);
  if (node.empty()) return;
  cy.elements().unselect();
  node.select();
  cy.zoom({ level: Math.max(cy.zoom(), 1.2), position: node.position() });
  cy.center(node);
}
