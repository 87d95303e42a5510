/**
 * The web UI takes the API's record shapes from types generated from the OpenAPI document
 * (scripts/generate-api-types.mjs). Type-checks the UI (src/web/tsconfig.json) against types
 * generated here from the current route schemas, and shows that a field renamed in a route
 * schema (or in a live event's data, schemas/event.ts) is a type error in the UI, the guarantee
 * the generation exists for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_TYPES_FILE, apiTypesSource } from '../../scripts/generate-api-types.mjs';
import { openApiDocument } from '../../scripts/openapi-document.js';
import { webTypeChecker, type WebTypeChecker } from '../helpers/web-type-check.mjs';

type Schema = { properties?: Record<string, Schema>; required?: string[]; items?: Schema };
type Document = { paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: Schema }> }> }>> };

/** Fields renamed in one changed document: each must break the UI type-check on its own name. */
const RENAMED = [
  { path: '/api/devices', field: 'risk_level', at: (s: Schema) => s.items! },
  { path: '/api/config', field: 'host_timeout_seconds', at: (s: Schema) => s.properties!.scanning },
];

describe('web UI types generated from the OpenAPI document', () => {
  let document: Document;
  let checker: WebTypeChecker;
  /** The errors of the UI type-check against a document with every field of RENAMED and the live event's `progress` renamed. */
  let renamedErrors: Promise<string[]>;

  beforeAll(async () => {
    document = (await openApiDocument()) as unknown as Document;
    checker = webTypeChecker(API_TYPES_FILE);
    // One type-check of the UI takes many seconds of CPU: the renamed fields share one.
    const changed = structuredClone(document);
    for (const { path, field, at } of RENAMED) {
      renameProperty(at(changed.paths[path].get.responses['200'].content['application/json'].schema), field, `${field}_renamed`);
    }
    const events = changed as unknown as EventsDocument;
    const stream = events.paths['/api/events'].get.responses['200'].content['text/event-stream'].schema;
    const progress = stream.anyOf.find((event) => event.properties.event.enum?.[0] === 'scan_progress');
    expect(progress, 'the stream describes no scan_progress event').toBeDefined();
    renameProperty(progress!.properties.data, 'progress', 'progress_renamed');
    renamedErrors = apiTypesSource(changed).then((text) => checker.check(text));
    renamedErrors.catch(() => {});
  }, 60_000);

  afterAll(async () => {
    await checker?.close();
  });

  it('the UI type-checks against the current route schemas', async () => {
    expect(await checker.check(await apiTypesSource(document))).toEqual([]);
  }, 120_000);

  it.each(RENAMED)(
    'a renamed $field in the answer of GET $path breaks the UI type-check',
    async ({ field }) => {
      expect((await renamedErrors).join('\n')).toContain(`'${field}'`);
    },
    120_000,
  );

  it('a renamed field in a live event’s data (GET /api/events) breaks the UI type-check', async () => {
    expect((await renamedErrors).join('\n')).toContain(`'progress'`);
  }, 120_000);
});

/** GET /api/events as the document describes it: one schema per event, `event` naming it. */
type EventsDocument = {
  paths: Record<
    string,
    {
      get: {
        responses: Record<string, { content: Record<string, { schema: { anyOf: { properties: { event: { enum?: string[] }; data: Schema } }[] } }> }>;
      };
    }
  >;
};

function renameProperty(schema: Schema, from: string, to: string): void {
  const properties = schema.properties!;
  expect(properties[from], `the schema has no ${from}`).toBeDefined();
  properties[to] = properties[from];
  delete properties[from];
  schema.required = schema.required?.map((name) => (name === from ? to : name));
}
