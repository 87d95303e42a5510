/**
 * The channel config in the OpenAPI document: the union of the drivers' config schemas. The route
 * schemas validate `config` as an object (each driver's schema is applied by notify/channel-config.ts,
 * whose 400 details name the key), and mark it `x-channel-config`; this replaces each marked schema
 * in the document with `anyOf` references to one component per channel type (`WebhookChannelConfig`,
 * …), whose fields carry their label (`title`), prose (`description`), default and, for secrets,
 * `x-secret: true`. The web UI builds its channel forms from these components.
 */
import { DRIVERS } from '../notify/channels/index.js';
import { CHANNEL_TYPES } from '../notify/types.js';

const MARK = 'x-channel-config';

/** The component name of each channel type's config schema. */
export function channelConfigComponent(type: (typeof CHANNEL_TYPES)[number]): string {
  return String(DRIVERS[type].configSchema.title);
}

/** `document` (the one @fastify/swagger built) with the channel config unions and their components. */
export function withChannelConfigUnion<D extends { components?: { schemas?: Record<string, unknown> } }>(document: D): D {
  const components = (document.components ??= {});
  const schemas = (components.schemas ??= {});
  for (const type of CHANNEL_TYPES) {
    // JSON round trip: a plain copy without TypeBox's symbol keys.
    schemas[channelConfigComponent(type)] = { ...JSON.parse(JSON.stringify(DRIVERS[type].configSchema)), 'x-channel-type': type };
  }
  const anyOf = CHANNEL_TYPES.map((type) => ({ $ref: `#/components/schemas/${channelConfigComponent(type)}` }));
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (node === null || typeof node !== 'object') return node;
    const record = node as Record<string, unknown>;
    if (record[MARK] === true) return { description: record.description, anyOf };
    for (const [key, value] of Object.entries(record)) if (key !== 'components') record[key] = visit(value);
    return record;
  };
  return visit(document) as D;
}
