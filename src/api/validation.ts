import Ajv, { type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyReply, FastifyRequest, FastifySchemaCompiler, preParsingHookHandler } from 'fastify';
import { HttpError } from './errors.js';

const common: Options = {
  removeAdditional: false,
  useDefaults: true,
  allErrors: false,
  strict: false,
  // TypeBox annotates schemas with these keywords.
  keywords: ['kind', 'modifier'],
};

/**
 * Bodies are validated exactly as sent: `"true"` is not a boolean and unknown fields are errors.
 * Query strings and path parameters arrive as text, so those are coerced to the declared types.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const bodyAjv = addFormats.default(new Ajv.default({ ...common, coerceTypes: false }));
  const textAjv = addFormats.default(new Ajv.default({ ...common, coerceTypes: 'array' }));
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? bodyAjv : textAjv;
    return ajv.compile(schema as object);
  };
}

const NUL = '\u0000';

/**
 * Where a parsed request part holds U+0000 (PostgreSQL cannot store it in text; no legitimate
 * input needs it): the dotted path of the first string or field name containing it, `''` for the
 * part itself, undefined when there is none.
 */
export function findNul(value: unknown, path = ''): string | undefined {
  // Iterative, depth first in document order: a body nested 100,000 levels deep must not overflow the stack.
  const pending: Array<[unknown, string]> = [[value, path]];
  while (pending.length > 0) {
    const [item, itemPath] = pending.pop()!;
    if (typeof item === 'string') {
      if (item.includes(NUL)) return itemPath;
      continue;
    }
    if (typeof item !== 'object' || item === null) continue;
    const children: Array<[unknown, string]> = [];
    for (const [key, child] of Array.isArray(item) ? item.entries() : Object.entries(item)) {
      const name = String(key);
      const childPath = itemPath ? `${itemPath}.${name}` : name;
      if (name.includes(NUL)) return childPath.replaceAll(NUL, '\\0');
      children.push([child, childPath]);
    }
    for (let i = children.length - 1; i >= 0; i--) pending.push(children[i]);
  }
  return undefined;
}

/** Requests whose body their parser already found free of NUL (in its text: a large body is not walked again). */
const nulFreeBodies = new WeakSet<FastifyRequest>();

/**
 * For a body parser that has the JSON text: refuses (400) a text that escapes U+0000 anywhere
 * (JSON can hold NUL no other way), and spares the request the walk of its parsed body.
 */
export function checkJsonTextForNul(request: FastifyRequest, text: string): void {
  // `\u0000` preceded by an even number of backslashes is the escape (an odd number escapes the backslash).
  if (text.includes('\\u0000') && /(?<!\\)(?:\\\\)*\\u0000/.test(text))
    throw new HttpError('NW_VALIDATION', 'body: must not contain the NUL character (\\u0000)');
  nulFreeBodies.add(request);
}

/**
 * For a body parser that keeps the bytes of a UTF-8 text body (the import's nmap report): refuses
 * (400) bytes holding NUL, as the walk of the decoded text would (in UTF-8 only U+0000 has a zero
 * byte, and no invalid sequence decodes to it), and spares the request that walk.
 */
export function checkBytesForNul(request: FastifyRequest, bytes: Uint8Array): void {
  if (bytes.includes(0)) throw new HttpError('NW_VALIDATION', 'body: must not contain the NUL character');
  nulFreeBodies.add(request);
}

/** preValidation hook: every path parameter, query parameter and body string, however deep, is free of NUL. */
export function rejectNulCharacters(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  // A callback hook rather than an async one: every request passes here, and most have nothing to refuse.
  let err: Error | undefined;
  try {
    checkNulCharacters(request);
  } catch (caught) {
    err = caught as Error;
  }
  done(err);
}

function checkNulCharacters(request: FastifyRequest): void {
  const parts: Array<[unknown, string]> = [
    [request.params, 'path'],
    [request.query, 'query'],
    ...(nulFreeBodies.has(request) ? [] : [[request.body, 'body'] as [unknown, string]]),
  ];
  for (const [value, partName] of parts) {
    const where = findNul(value);
    if (where !== undefined) throw new HttpError('NW_VALIDATION', `${where || partName}: must not contain the NUL character`);
  }
}

/**
 * The charset a Content-Type declares, lower-cased and unquoted; undefined when it names none.
 * JSON is UTF-8 (RFC 8259), so any other declared charset is refused rather than misread.
 */
export function declaredCharset(contentType: string | undefined): string | undefined {
  const m = contentType?.match(/;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i);
  return m ? (m[1] ?? m[2]).toLowerCase() : undefined;
}

/** preParsing hook: a body declared in a charset other than UTF-8 gets 415 before it is parsed as UTF-8. */
export const rejectForeignCharsets: preParsingHookHandler = (request, _reply, _payload, done) => {
  // A callback hook rather than an async one, as rejectNulCharacters.
  const { 'content-length': length, 'transfer-encoding': encoding } = request.headers;
  // Without a body the declared charset describes nothing.
  if ((length === undefined || length === '0') && encoding === undefined) return done();
  const charset = declaredCharset(request.headers['content-type']);
  if (charset !== undefined && charset !== 'utf-8') {
    return done(new HttpError('NW_UNSUPPORTED_MEDIA_TYPE', `body: charset ${charset} is not supported; send JSON encoded as UTF-8`));
  }
  done();
};
