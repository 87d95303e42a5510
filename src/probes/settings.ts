/**
 * What a person may set about the recognition probes, as a TypeBox shape: which probes run, the
 * SNMP communities tried, and their time bounds. Proposed as the `recognition` group of the
 * stored settings (`recognition.probes`, `recognition.snmp_communities`,
 * `recognition.probe_timeout_ms`, `recognition.host_timeout_ms`); until core/settings.ts carries
 * it, the caller passes it to runProbes.
 */
import { Type, type Static } from '@sinclair/typebox';
import { PROBE_NAMES } from '../core/probe-results.js';

export const ProbeSettingsSchema = Type.Object(
  {
    probes: Type.Array(Type.Union(PROBE_NAMES.map((name) => Type.Literal(name))), {
      uniqueItems: true,
      description: 'Recognition probes run on every host a scan reached (mdns, ssdp, netbios, snmp, http, tls, ssh); empty runs none',
    }),
    snmp_communities: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      maxItems: 8,
      description: 'SNMP v2c communities tried in turn, read-only (a secret: masked on read); default public',
    }),
    probe_timeout_ms: Type.Integer({ minimum: 200, maximum: 10_000, description: "One probe's time on one host, answers included" }),
    host_timeout_ms: Type.Integer({ minimum: 500, maximum: 60_000, description: 'All the probes of one host together' }),
  },
  { additionalProperties: false },
);

export type ProbeSettings = Static<typeof ProbeSettingsSchema>;

export const DEFAULT_PROBE_SETTINGS: ProbeSettings = {
  probes: [...PROBE_NAMES],
  snmp_communities: ['public'],
  probe_timeout_ms: 2000,
  host_timeout_ms: 8000,
};
