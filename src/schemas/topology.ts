/** The network map (CONTRACT §16, §18) as the API shows it: the one definition for route, OpenAPI and web UI. */
import { type Static, type TInteger, Type } from '@sinclair/typebox';
import { RISK_LEVELS, type RiskLevel } from '../core/severity.js';
import { LINK_SOURCES } from '../core/device-links.js';
import { TOPOLOGY_EDGE_KINDS, TOPOLOGY_EVIDENCE, TOPOLOGY_NODE_KINDS } from '../core/topology.js';
import { Nullable, StringEnum } from './common.js';

export const TopologyNode = Type.Object({
  id: Type.String({
    description: '`internet`, `gateway:<address>`, `subnet:<cidr>`, `agent:<id>` or `device:<id>` (devices, switches and access points)',
  }),
  kind: StringEnum(TOPOLOGY_NODE_KINDS),
  device_id: Nullable(
    Type.Integer({ description: 'The inventory device the node is (devices, switches, access points; a gateway that is in the inventory)' }),
  ),
  label: Type.String({ description: "A device's name, else its host name, else its address; a subnet's CIDR; an agent's name" }),
  device_type: Nullable(Type.String({ description: 'CONTRACT §15 device type of a device node; `router` for a gateway not in the inventory' })),
  risk_level: Nullable(StringEnum(RISK_LEVELS, { description: "A device's risk level; a subnet's worst device's" })),
  online: Type.Boolean({ description: 'False for a device offline (CONTRACT §8) or an agent not heard from; true for the rest' }),
  zone: Nullable(Type.String()),
  subnet: Nullable(Type.String({ description: 'The subnet (CIDR) the node belongs to' })),
  ip_address: Nullable(Type.String({ description: 'Device and gateway nodes: the address' })),
  device_count: Nullable(Type.Integer({ description: 'Subnet nodes: how many device nodes it holds in this answer' })),
  online_count: Type.Optional(Type.Integer({ description: 'Subnet nodes only: how many of its devices are online' })),
  risk_counts: Type.Optional(
    Type.Object(Object.fromEntries(RISK_LEVELS.map((level) => [level, Type.Integer()])) as Record<RiskLevel, TInteger>, {
      description: 'Subnet nodes only: how many of its devices are at each risk level',
    }),
  ),
});

export const TopologyEdge = Type.Object({
  source: Type.String({ description: 'The upper node (nearer the internet)' }),
  target: Type.String({ description: 'The lower node' }),
  kind: StringEnum(TOPOLOGY_EDGE_KINDS, {
    description:
      '`uplink` towards the internet, `l3` routed (gateway or agent to subnet), `l2` wired same network, `wifi` an access point to its client',
  }),
  evidence: StringEnum(TOPOLOGY_EVIDENCE, {
    description:
      "`confirmed`: a table says so (the server's routing table, an agent's configured networks, a controller's or switch's client table); `measured`: traceroute; `inferred`: reasoned (same subnet, the only router of a subnet)",
  }),
  confirmed_by: Nullable(
    StringEnum(LINK_SOURCES, {
      description:
        "A switch's or access point's edge to its client: whose table confirms it (`unifi` the controller's lists, `lldp` the switch's LLDP neighbours, `snmp` its bridge forwarding table); null on every other edge",
    }),
  ),
});

export const Topology = Type.Object({
  nodes: Type.Array(TopologyNode),
  edges: Type.Array(TopologyEdge, { description: 'Every node but `internet` is the target of exactly one edge' }),
});

export type Topology = Static<typeof Topology>;
