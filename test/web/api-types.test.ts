/**
 * The web UI takes the API's record shapes from types generated from the OpenAPI document
 * (scripts/generate-api-types.mjs). Type-checks the UI (src/web/tsconfig.json) against types
 * generated here from the current route schemas, and shows that a field renamed in a route
 * schema (or in a live event's data, schemas/event.ts) is a type error in the UI, the guarantee
 * the generation exists for.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_TYPES_FILE, apiTypesSource } from '../../scripts/generate-api-types.mjs';
import { openApiDocument } from '../../scripts/openapi-document.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

type Schema = { properties?: Record<string, Schema>; required?: string[]; items?: Schema };
type Document = { paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: Schema }> }> }>> };

describe('web UI types generated from the OpenAPI document', () => {
  let document: Document;
  let typeCheck: (apiTypes: string) => string[];

  beforeAll(async () => {
    document = (await openApiDocument()) as unknown as Document;
    typeCheck = webTypeChecker();
  }, 60_000);

  it('the UI type-checks against the current route schemas', async () => {
    expect(typeCheck(await apiTypesSource(document))).toEqual([]);
  }, 60_000);

  it.each([
    { path: '/api/devices', field: 'risk_level', at: (s: Schema) => s.items! },
    { path: '/api/config', field: 'host_timeout_seconds', at: (s: Schema) => s.properties!.scanning },
  ])(
    'a renamed $field in the answer of GET $path breaks the UI type-check',
    async ({ path, field, at }) => {
      const changed = structuredClone(document);
      renameProperty(at(changed.paths[path].get.responses['200'].content['application/json'].schema), field, `${field}_renamed`);
      const errors = typeCheck(await apiTypesSource(changed));
      expect(errors.length).toBeGreaterThan(0);
      expect(errors.join('\n')).toContain(`'${field}'`);
    },
    60_000,
  );

  it('a renamed field in a live event’s data (GET /api/events) breaks the UI type-check', async () => {
    const changed = structuredClone(document) as unknown as EventsDocument;
    const stream = changed.paths['/api/events'].get.responses['200'].content['text/event-stream'].schema;
    const progress = stream.anyOf.find((event) => event.properties.event.enum?.[0] === 'scan_progress');
    expect(progress, 'the stream describes no scan_progress event').toBeDefined();
    renameProperty(progress!.properties.data, 'progress', 'progress_renamed');
    const errors = typeCheck(await apiTypesSource(changed));
    expect(errors.join('\n')).toContain(`'progress'`);
  }, 60_000);
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

/**
 * Type-checks src/web as `tsc -p src/web` does, with api-types.ts replaced by the given text
 * (nothing is written). Parsed files are shared between runs; returns the errors, formatted.
 */
function webTypeChecker(): (apiTypes: string) => string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, 'src', 'web', 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!config) throw new Error('src/web/tsconfig.json could not be read');
  const rootNames = [...new Set([...config.fileNames, API_TYPES_FILE])];
  const parsed = new Map<string, ts.SourceFile | undefined>();
  let previous: ts.Program | undefined;

  return (apiTypes) => {
    const host = ts.createCompilerHost(config.options);
    const getSourceFile = host.getSourceFile.bind(host);
    host.fileExists = (file) => file === API_TYPES_FILE || ts.sys.fileExists(file);
    host.readFile = (file) => (file === API_TYPES_FILE ? apiTypes : ts.sys.readFile(file));
    host.getSourceFile = (file, language, ...rest) => {
      if (file === API_TYPES_FILE) return ts.createSourceFile(file, apiTypes, language);
      if (!parsed.has(file)) parsed.set(file, getSourceFile(file, language, ...rest));
      return parsed.get(file);
    };
    const program = ts.createProgram({ rootNames, options: config.options, host, oldProgram: previous });
    previous = program;
    return ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
      const file = d.file ? `${d.file.fileName.slice(root.length + 1)}(${where!.line + 1}): ` : '';
      return file + ts.flattenDiagnosticMessageText(d.messageText, ' ');
    });
  };
}
