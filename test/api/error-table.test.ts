/**
 * The one error hierarchy (#20 §3): every error class in src/ is a NetwardenError with a code of
 * its own from ERROR_CODES, every code has its HTTP status, and README.md's table is current.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { README, withErrorTable } from '../../scripts/generate-error-table.mjs';
import { HttpError, STATUS_OF_CODE, codesOfStatus, errorCodeTable } from '../../src/api/errors.js';
import { errorResponses } from '../../src/api/schemas.js';
import { ScanBusyError, ScanNotFoundError } from '../../src/scan/errors.js';
import { DatabaseUnavailableError } from '../../src/store/errors.js';
import { ConflictError, ERROR_CODES, NetwardenError, NotFoundError, RefusedError, type ErrorCode } from '../../src/util/errors.js';

const SRC = join(import.meta.dirname, '..', '..', 'src');

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    // The web UI is a browser bundle apart from the server's layers; its ApiError is the client's view of an answer.
    if (entry.isDirectory()) yield* entry.name === 'web' && dir === SRC ? [] : sources(path);
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) yield path;
  }
}

interface ErrorClass {
  name: string;
  parent: string;
  file: string;
  abstract: boolean;
  /** The `readonly code = 'NW_…'` the class declares itself. */
  code: string | undefined;
}

/** Every `class X extends Y` of src/, with the code its body declares. */
function errorClasses(): ErrorClass[] {
  const classes: ErrorClass[] = [];
  for (const file of sources(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^(?:export )?(abstract )?class (\w+)(?:<[^>]*>)? extends (\w+)\b[^{]*\{/gm)) {
      const rest = text.slice(m.index + m[0].length);
      const body = rest.slice(0, rest.search(/^\}/m));
      const code = body.match(/readonly code(?:: ErrorCode)? = '(\w+)'/)?.[1];
      classes.push({ name: m[2], parent: m[3], file: relative(SRC, file), abstract: m[1] !== undefined, code });
    }
  }
  const byName = new Map(classes.map((c) => [c.name, c]));
  const isError = (c: ErrorClass): boolean => c.parent === 'Error' || (byName.has(c.parent) && isError(byName.get(c.parent)!));
  return classes.filter(isError);
}

describe('the error hierarchy', () => {
  const classes = errorClasses();

  it('finds the error classes of every layer', () => {
    expect(classes.length).toBeGreaterThan(25);
    expect(classes.map((c) => c.name)).toEqual(expect.arrayContaining(['DatabaseUnavailableError', 'CliError', 'ScanBusyError', 'HttpError']));
  });

  it('roots every error class in NetwardenError', () => {
    expect(classes.filter((c) => c.parent === 'Error').map((c) => `${c.file}: ${c.name}`)).toEqual(['util/errors.ts: NetwardenError']);
  });

  it('gives every concrete error class a code of its own from ERROR_CODES', () => {
    // HttpError is the API layer's own answer: its code is chosen where it is thrown.
    const concrete = classes.filter((c) => !c.abstract && c.name !== 'HttpError');
    expect(concrete.filter((c) => c.code === undefined).map((c) => `${c.file}: ${c.name}`)).toEqual([]);
    expect(concrete.filter((c) => !(c.code! in ERROR_CODES)).map((c) => `${c.file}: ${c.name} ${c.code}`)).toEqual([]);
    const owners = new Map<string, string[]>();
    for (const c of concrete) owners.set(c.code!, [...(owners.get(c.code!) ?? []), c.name]);
    expect([...owners].filter(([, names]) => names.length > 1)).toEqual([]);
  });

  it('gives every code an HTTP status, and nothing else one', () => {
    expect(Object.keys(STATUS_OF_CODE).sort()).toEqual(Object.keys(ERROR_CODES).sort());
    for (const [code, status] of Object.entries(STATUS_OF_CODE)) {
      expect(status, code).toBeGreaterThanOrEqual(400);
      expect(status, code).toBeLessThan(600);
      expect(code).toMatch(/^NW_[A-Z]+(_[A-Z]+)*$/);
      expect(ERROR_CODES[code as ErrorCode].length, code).toBeGreaterThan(10);
    }
    // Internal codes are faults if they reach the API.
    for (const [code, meaning] of Object.entries(ERROR_CODES))
      if (meaning.startsWith('(internal)')) expect(STATUS_OF_CODE[code as ErrorCode], code).toBe(500);
  });

  it('keeps class names, instanceof and the code on each instance', () => {
    const busy = new ScanBusyError(7);
    expect(busy).toBeInstanceOf(ConflictError);
    expect(busy).toBeInstanceOf(RefusedError);
    expect(busy).toBeInstanceOf(NetwardenError);
    expect(busy).toBeInstanceOf(Error);
    expect({ name: busy.name, code: busy.code, extra: busy.extra, detail: busy.detail }).toEqual({
      name: 'ScanBusyError',
      code: 'NW_SCAN_BUSY',
      extra: { scan_id: 7 },
      detail: 'A scan is already running',
    });
    expect(new ScanNotFoundError()).toBeInstanceOf(NotFoundError);
    const down = new DatabaseUnavailableError('postgres at db:5432 refused', { detail: 'The database is unavailable', retryAfterSeconds: 5 });
    expect(down).not.toBeInstanceOf(RefusedError);
    expect({ message: down.message, detail: down.detail, retry: down.retryAfterSeconds, status: STATUS_OF_CODE[down.code] }).toEqual({
      message: 'postgres at db:5432 refused',
      detail: 'The database is unavailable',
      retry: 5,
      status: 503,
    });
    expect(new HttpError('NW_METHOD_NOT_ALLOWED', 'no').statusCode).toBe(405);
  });

  it('documents the codes of each status in the OpenAPI error bodies; a 401 has none', () => {
    const responses = errorResponses(400, 401, 404) as Record<number, { properties: Record<string, { enum?: string[] }> }>;
    expect(responses[404].properties.code.enum).toEqual(codesOfStatus(404));
    expect(responses[404].properties.code.enum).toContain('NW_SCAN_NOT_FOUND');
    expect(responses[400].properties.code.enum).toContain('NW_VALIDATION');
    expect(Object.keys(responses[401].properties)).toEqual(['detail']);
  });

  it('README.md lists every code as ERROR_CODES describes it (node scripts/generate-error-table.mjs)', () => {
    const readme = readFileSync(README, 'utf8');
    expect(readme).toBe(withErrorTable(readme, errorCodeTable()));
  });
});
