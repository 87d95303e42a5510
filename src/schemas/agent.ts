/** An agent as the API shows it (CONTRACT §12): the one definition for routes, store and OpenAPI. */
import { type Static, Type } from '@sinclair/typebox';
import {
  AGENT_NAME_MAX_LENGTH,
  AGENT_NETWORKS_MAX_ITEMS,
  AGENT_OFFLINE_AFTER_SECONDS,
  AGENT_POLL_WAIT_SECONDS,
  AGENT_UPLOAD_MAX_HOSTS,
  CPE_MAX_ITEMS,
  CPE_MAX_LENGTH,
  DEVICE_TYPE_MAX_LENGTH,
  HOST_PORTS_MAX_ITEMS,
  HOST_TEXT_MAX_LENGTH,
  HOSTNAME_MAX_LENGTH,
  PORT_STATE_MAX_LENGTH,
  PORTS,
  SERVICE_NAME_MAX_LENGTH,
  SERVICE_TEXT_MAX_LENGTH,
} from '../core/limits.js';
import { SCAN_ENGINE_NAMES, SCAN_ENGINE_SETTINGS, SCAN_PROFILES } from '../core/model.js';
import { MAX_BRIDGE_ROWS, MAX_LLDP_ROWS, PROBE_NAMES } from '../core/probe-results.js';
import { Nullable, StringEnum, Timestamp } from './common.js';
import { ScanProgress } from './scan.js';

export const AGENT_STATUSES = ['online', 'offline'] as const;

export const AgentRecord = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  networks: Type.Array(Type.String(), { description: 'IPv4 CIDR blocks the agent scans; a scan whose target lies in one of them is run by it' }),
  status: StringEnum(AGENT_STATUSES, { description: `online when heard from in the last ${AGENT_OFFLINE_AFTER_SECONDS} s` }),
  last_seen_at: Nullable(Timestamp),
  version: Nullable(Type.String({ description: "The agent's Netwarden version, as it reported it" })),
  hostname: Nullable(Type.String({ description: 'The host the agent runs on, as it reported it' })),
  engine: Nullable(Type.String({ description: 'The scan engines the agent can run, best first (`nmap, native` or `native`), as it reported them' })),
  token_prefix: Type.String({ description: 'First characters of its token, to recognise it' }),
  created_at: Timestamp,
});

export const NewAgent = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: AGENT_NAME_MAX_LENGTH }),
    networks: Type.Array(Type.String({ maxLength: 18 }), { minItems: 1, maxItems: AGENT_NETWORKS_MAX_ITEMS }),
  },
  { additionalProperties: false },
);

export const CreatedAgent = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  networks: Type.Array(Type.String()),
  token: Type.String({ description: 'The agent token (`nwa_…`): shown only in this response' }),
});

export type AgentRecord = Static<typeof AgentRecord>;
export type NewAgent = Static<typeof NewAgent>;
export type CreatedAgent = Static<typeof CreatedAgent>;

// The agent endpoints (called by `netwarden agent` with its token) ------------------------------

/** One run of an agent process (a random id it picks at start): a scan it took is its run's alone. */
export const AgentRunId = Type.String({
  pattern: '^[A-Za-z0-9-]{8,64}$',
  description: 'A random id the agent process picks when it starts; the scans it takes are bound to it',
});

export const AgentPoll = Type.Object(
  {
    run_id: AgentRunId,
    version: Type.String({ minLength: 1, maxLength: 50, description: "The agent's Netwarden version" }),
    engine: StringEnum(SCAN_ENGINE_NAMES, { description: 'The scan engine the agent will use for a scan that asks for `auto`' }),
    engines: Type.Optional(
      Type.Array(StringEnum(SCAN_ENGINE_NAMES), {
        maxItems: SCAN_ENGINE_NAMES.length,
        description: 'Every engine the agent can run (default: `engine`)',
      }),
    ),
    hostname: Type.Optional(Type.String({ maxLength: 253, description: 'The host the agent runs on' })),
    wait_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: AGENT_POLL_WAIT_SECONDS,
        description: `How long to wait for a scan before answering 204 (default ${AGENT_POLL_WAIT_SECONDS})`,
      }),
    ),
  },
  { additionalProperties: false },
);

export const AgentJob = Type.Object({
  scan_id: Type.Integer(),
  profile: StringEnum(SCAN_PROFILES),
  subnet: Type.String({ description: 'The CIDR to discover in (a single-device scan: the address as /32)' }),
  device: Nullable(Type.String({ description: "A single-device scan's address" })),
  exclude: Type.Array(Type.String(), { description: 'CIDR blocks never probed' }),
  ports: Nullable(Type.String({ description: "The ports to examine (nmap's -p syntax); null for a quick scan" })),
  os_detection: Type.Boolean(),
  resolve_hostnames: Type.Boolean(),
  host_timeout_seconds: Type.Integer(),
  engine: StringEnum(SCAN_ENGINE_SETTINGS, { description: 'scanning.engine: auto lets the agent choose' }),
  timeout_seconds: Type.Integer({ description: "The scan's time limit; the agent stops it after this" }),
  expected: Type.Array(Type.String(), { description: 'Addresses online after the previous scan (port-scanned from the start)' }),
  recognition: Type.Optional(
    Type.Object(
      {
        probes: Type.Array(StringEnum(PROBE_NAMES)),
        snmp_communities: Type.Array(Type.String()),
      },
      {
        description:
          "The server's `recognition` settings: after a `normal` or `intensive` scan's port phase the agent runs these probes on every host its scan reached " +
          '(unicast, as the server does for its own scans) and uploads what they learned with each host (`ports.N.probes`). Absent from servers that predate it: no probes',
      },
    ),
  ),
});

export const AgentProgressReport = Type.Object({ run_id: AgentRunId, progress: ScanProgress }, { additionalProperties: false });

export const AgentProgressAnswer = Type.Object({
  action: StringEnum(['continue', 'cancel', 'drop'] as const, {
    description:
      "`cancel`: the scan was cancelled, stop it and report `cancelled`; `drop`: it is no longer this run's (ended elsewhere), stop without reporting",
  }),
});

const Text = (max: number) => Nullable(Type.String({ maxLength: max }));

/** What the recognition probes learned about one host (core/probe-results.ts), within the bounds the probes keep (src/probes/). */
const ProbeText = (max = 1024) => Nullable(Type.String({ maxLength: max }));
const ProbeList = (maxItems: number, maxLength = 255) => Type.Array(Type.String({ maxLength }), { maxItems });
const ProbePort = Type.Integer({ minimum: PORTS.min, maximum: PORTS.max });
export const UploadedProbeResults = Type.Object(
  {
    mdns: Type.Optional(
      Type.Object(
        {
          names: ProbeList(16),
          services: ProbeList(32),
          instances: ProbeList(64),
          txt: Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 255 }), { maxProperties: 64 }),
        },
        { additionalProperties: false },
      ),
    ),
    ssdp: Type.Optional(
      Type.Object(
        {
          location: ProbeText(2048),
          server: ProbeText(),
          friendlyName: ProbeText(),
          manufacturer: ProbeText(),
          modelName: ProbeText(),
          modelNumber: ProbeText(),
          udn: ProbeText(),
          deviceType: ProbeText(),
        },
        { additionalProperties: false },
      ),
    ),
    netbios: Type.Optional(
      Type.Object({ name: Type.String({ maxLength: 64 }), workgroup: ProbeText(64), mac: ProbeText(17) }, { additionalProperties: false }),
    ),
    snmp: Type.Optional(
      Type.Object(
        {
          community: Type.String({ maxLength: 255 }),
          sysDescr: ProbeText(),
          sysObjectID: ProbeText(255),
          sysName: ProbeText(),
          engineId: ProbeText(64),
          bridge: Type.Optional(
            Type.Array(
              Type.Object(
                { mac: Type.String({ maxLength: 17 }), port: Type.Integer({ minimum: 1, maximum: 65535 }) },
                { additionalProperties: false },
              ),
              {
                maxItems: MAX_BRIDGE_ROWS,
              },
            ),
          ),
          lldp: Type.Optional(
            Type.Array(
              Type.Object(
                { localPort: Type.Integer({ minimum: 0, maximum: 2147483647 }), chassisMac: ProbeText(17), sysName: ProbeText(255) },
                { additionalProperties: false },
              ),
              { maxItems: MAX_LLDP_ROWS },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    http: Type.Optional(
      Type.Array(
        Type.Object(
          {
            port: ProbePort,
            tls: Type.Boolean(),
            status: Nullable(Type.Integer({ minimum: 0, maximum: 999 })),
            title: ProbeText(),
            server: ProbeText(),
            faviconHash: Nullable(Type.Integer()),
          },
          { additionalProperties: false },
        ),
        { maxItems: 8 },
      ),
    ),
    tls: Type.Optional(
      Type.Array(
        Type.Object(
          {
            port: ProbePort,
            subject: ProbeText(),
            issuer: ProbeText(),
            sans: ProbeList(64),
            notBefore: ProbeText(64),
            notAfter: ProbeText(64),
            selfSigned: Type.Boolean(),
            keyHash: ProbeText(128),
          },
          { additionalProperties: false },
        ),
        { maxItems: 8 },
      ),
    ),
    ssh: Type.Optional(
      Type.Array(
        Type.Object({ port: ProbePort, banner: ProbeText(), keyType: ProbeText(64), fingerprint: ProbeText(128) }, { additionalProperties: false }),
        { maxItems: 8 },
      ),
    ),
  },
  {
    additionalProperties: false,
    description:
      "What the recognition probes the agent ran learned about the host (the shape of the server's own probe results, docs/recognition.md); recorded as identity and evidence as for the server's own scans",
  },
);

const UploadedHostFields = {
  ip: Type.String({ format: 'ipv4' }),
  mac: Nullable(Type.String({ pattern: '^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$' })),
  vendor: Text(HOST_TEXT_MAX_LENGTH),
  hostname: Text(HOSTNAME_MAX_LENGTH),
};

export const UploadedPort = Type.Object(
  {
    port: Type.Integer({ minimum: PORTS.min, maximum: PORTS.max }),
    protocol: StringEnum(['tcp', 'udp'] as const),
    state: Type.String({ maxLength: PORT_STATE_MAX_LENGTH }),
    service: Text(SERVICE_NAME_MAX_LENGTH),
    product: Text(SERVICE_TEXT_MAX_LENGTH),
    version: Text(SERVICE_TEXT_MAX_LENGTH),
    extra_info: Text(SERVICE_TEXT_MAX_LENGTH),
    cpe: Type.Array(Type.String({ maxLength: CPE_MAX_LENGTH }), { maxItems: CPE_MAX_ITEMS }),
    service_guessed: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** One host discovery found up, as an upload lists it. */
export const UploadedHost = Type.Object(UploadedHostFields, { additionalProperties: false });

/** One host's port results without the ports themselves (an upload's `ports` entry is checked in parts: a host may list 131,070 ports). */
const scannedHostFields = {
  ...UploadedHostFields,
  os_name: Text(HOST_TEXT_MAX_LENGTH),
  device_type: Text(DEVICE_TYPE_MAX_LENGTH),
  probes: Type.Optional(UploadedProbeResults),
};

export const UploadedScannedHost = Type.Object(
  { ...scannedHostFields, ports: Type.Array(UploadedPort, { maxItems: HOST_PORTS_MAX_ITEMS }) },
  { additionalProperties: false },
);

const uploadFields = {
  run_id: AgentRunId,
  engine: StringEnum(SCAN_ENGINE_NAMES, { description: 'The engine that ran the scan' }),
  warnings: Type.Optional(Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 100 })),
};

export const AgentUpload = Type.Object(
  {
    ...uploadFields,
    hosts: Type.Array(UploadedHost, { maxItems: AGENT_UPLOAD_MAX_HOSTS, description: 'Every host discovery found up' }),
    ports: Type.Array(UploadedScannedHost, {
      maxItems: AGENT_UPLOAD_MAX_HOSTS,
      description: 'Port results of the hosts found (empty for a quick scan)',
    }),
  },
  { additionalProperties: false },
);

/**
 * AgentUpload in the parts the server checks it in, giving the event loop back between them (a
 * 100 MiB upload checked in one go would hold every other request up for seconds): the envelope
 * with its lists unchecked, one host, one port-result entry without its ports, one port.
 */
export const AgentUploadParts = {
  envelope: Type.Object(
    {
      ...uploadFields,
      hosts: Type.Array(Type.Unknown(), { maxItems: AGENT_UPLOAD_MAX_HOSTS }),
      ports: Type.Array(Type.Unknown(), { maxItems: AGENT_UPLOAD_MAX_HOSTS }),
    },
    { additionalProperties: false },
  ),
  host: UploadedHost,
  scannedHost: Type.Object(
    { ...scannedHostFields, ports: Type.Array(Type.Unknown(), { maxItems: HOST_PORTS_MAX_ITEMS }) },
    { additionalProperties: false },
  ),
  port: UploadedPort,
};

export const AgentEnd = Type.Object(
  {
    run_id: AgentRunId,
    status: StringEnum(['failed', 'cancelled'] as const),
    error: Type.String({ minLength: 1, maxLength: 2000, description: 'Why, in words for the Scans page' }),
  },
  { additionalProperties: false },
);

export type AgentPoll = Static<typeof AgentPoll>;
export type AgentJob = Static<typeof AgentJob>;
export type AgentProgressReport = Static<typeof AgentProgressReport>;
export type AgentProgressAnswer = Static<typeof AgentProgressAnswer>;
export type AgentUpload = Static<typeof AgentUpload>;
export type AgentEnd = Static<typeof AgentEnd>;
