/**
 * Whole requests for one operation: path and query parameters (encoded here, so malformed
 * percent-escapes and lone surrogates reach the server as written), a body with its Content-Type,
 * and which credentials to present. Credentials are named, not embedded: the harness fills them
 * in when the request is sent, since a fuzzed logout or key revocation replaces them.
 */
import fc from 'fast-check';
import type { Operation, Parameter } from './openapi.js';
import { type Hints, type Json, deeplyNested, jsonText, nastyJson, nastyString, objectOf, valueFor } from './values.js';

export type AuthMode =
  | 'none'
  | 'session cookie'
  | 'X-API-Key'
  | 'Bearer key'
  | 'session cookie, cross-site Origin'
  | 'unknown API key'
  | 'malformed API key'
  | 'unknown session cookie'
  | 'Basic credentials'
  /** An agent's token (Bearer): opens the agent endpoints (/api/agent/…) and nothing else. */
  | 'agent token'
  /** An agent token that no agent has. */
  | 'unknown agent token'
  /** Only the credential headers in `RequestPlan.headers`: garbage values. */
  | 'garbage credentials';

export interface RequestPlan {
  method: string;
  /** Path and query exactly as sent. */
  url: string;
  auth: AuthMode;
  /** Headers sent as they are (garbage credentials, X-Forwarded-For, Origin); live credentials take precedence. */
  headers: Record<string, string>;
  contentType: string | null;
  body?: string | Uint8Array<ArrayBuffer>;
  /** The Content-Type is not JSON in UTF-8: an operation taking a body must refuse it. */
  wrongContentType: boolean;
}

const AUTH_MODES: Array<{ weight: number; arbitrary: fc.Arbitrary<AuthMode> }> = [
  { weight: 8, arbitrary: fc.constant('session cookie') },
  { weight: 7, arbitrary: fc.constant('X-API-Key') },
  { weight: 2, arbitrary: fc.constant('Bearer key') },
  { weight: 2, arbitrary: fc.constant('none') },
  { weight: 1, arbitrary: fc.constant('session cookie, cross-site Origin') },
  { weight: 1, arbitrary: fc.constant('unknown API key') },
  { weight: 1, arbitrary: fc.constant('malformed API key') },
  { weight: 1, arbitrary: fc.constant('unknown session cookie') },
  { weight: 1, arbitrary: fc.constant('Basic credentials') },
  { weight: 2, arbitrary: fc.constant('garbage credentials') },
  { weight: 1, arbitrary: fc.constant('agent token') },
  { weight: 1, arbitrary: fc.constant('unknown agent token') },
];

/** The agent endpoints (security `agentToken`) take an agent token; the other modes must all be refused there. */
const AGENT_AUTH_MODES: Array<{ weight: number; arbitrary: fc.Arbitrary<AuthMode> }> = [
  { weight: 30, arbitrary: fc.constant('agent token') },
  ...AUTH_MODES.filter((m) => m.weight <= 2),
  { weight: 2, arbitrary: fc.constant('X-API-Key') },
  { weight: 2, arbitrary: fc.constant('session cookie') },
];

/** Any text a header value can carry: printable Latin-1 and tabs (fetch refuses NUL, CR and LF). */
const headerText = fc.string({ unit: 'binary-ascii', maxLength: 300 }).map((s) => s.replace(/[^\t\x20-\x7e\x80-\xff]/g, ''));

/** Credential headers no server issued: odd text, empty or duplicated cookies, keys of the wrong shape, other schemes. */
const GARBAGE_CREDENTIALS = fc.oneof(
  fc.record({
    cookie: fc.oneof(
      headerText,
      fc.constantFrom(
        'netwarden_session=%ff',
        'netwarden_session=',
        'netwarden_session="x"',
        `netwarden_session=${'a'.repeat(200)}`,
        'netwarden_session=a; netwarden_session=b',
        '=;=;',
        'netwarden_session',
      ),
    ),
  }),
  fc.record({ 'x-api-key': fc.oneof(headerText, fc.constantFrom('', 'svc_', `svc_${'A'.repeat(44)}é`, `svc_${'-'.repeat(45)}`, 'null')) }),
  fc.record({
    authorization: fc.oneof(
      headerText,
      fc.constantFrom('Bearer', 'Bearer ', 'Bearer  a b', 'bearer svc_x', 'Basic', 'Basic %%%', 'Digest x', 'Bearer svc_é'),
    ),
  }),
);

/** Headers a client or proxy may add: forwarded addresses (honoured once config trusts proxies), odd origins. */
const NOISE_HEADERS = fc.record(
  {
    'x-forwarded-for': fc.oneof(
      headerText,
      fc.constantFrom('10.66.0.1', '127.0.0.2, 10.66.0.1', 'unknown', '::1', '[::1]:80', '999.1.1.1', '127.0.0.1'.repeat(50)),
    ),
    origin: fc.oneof(headerText, fc.constantFrom('null', 'http://[::1', '://', 'http://127.0.0.1', 'file://')),
    accept: fc.constantFrom('text/html', 'application/xml', '*/*', 'application/json;q=0', ''),
  },
  { requiredKeys: [] },
);

export const JSON_CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'application/json;charset=UTF-8'];
/** Content types a JSON endpoint must refuse (415). */
export const WRONG_CONTENT_TYPES = [
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=fuzz',
  'application/xml',
  'text/html',
  'application/octet-stream',
];
/** JSON declared in a charset other than UTF-8 (RFC 8259): refused (415) rather than misread. The body is sent as UTF-8 regardless. */
export const FOREIGN_CHARSETS = ['application/json; charset=utf-16', 'application/json; charset=utf-16le', 'application/json; charset=iso-8859-1'];

/** Percent-escapes that do not decode to text, and separators, inserted into a URL as they are. */
const RAW_URL_TOKENS = ['%ff', '%', '%zz', '%C0%80', '%ED%A0%80', '%00', '+', '%2B', '%20', '%E2%80%AE', '%25', '%2F', '%3F', '%23', ';'];
/** Stray query-string pieces: unknown, duplicated and prototype-named parameters, empty pairs. */
const RAW_QUERY_PIECES = [
  '',
  '=',
  '=x',
  'foo',
  'foo=',
  '__proto__=1',
  '__proto__[x]=1',
  'constructor=1',
  'constructor[prototype][x]=1',
  'hasOwnProperty=1',
  'a[]=1',
  '%ff=1',
  'toString=x',
];

const UNRESERVED = /[A-Za-z0-9\-_.~]/;

/** Percent-encodes every UTF-16 code unit as UTF-8; a lone surrogate as its WTF-8 bytes (ED A0 80), which no URL API will write. */
export function percentEncode(text: string): string {
  let out = '';
  for (const ch of text) {
    if (UNRESERVED.test(ch)) {
      out += ch;
      continue;
    }
    const code = ch.codePointAt(0) as number;
    const bytes: number[] = [];
    if (code < 0x80) bytes.push(code);
    else if (code < 0x800) bytes.push(0xc0 | (code >> 6), 0x80 | (code & 0x3f));
    else if (code < 0x10000) bytes.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
    else bytes.push(0xf0 | (code >> 18), 0x80 | ((code >> 12) & 0x3f), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
    out += bytes.map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
  return out;
}

function textOf(value: Json): string {
  return typeof value === 'string' ? value : jsonText(value);
}

/** Longest hostile text in a URL: long enough to pass every declared maxLength, short of Node's 16 KiB header limit. */
const MAX_URL_TEXT = 1200;
const MAX_BODY_TEXT = 20_000;

/**
 * One parameter's value, encoded for the URL, both ways: one its schema accepts (steered by the
 * hints), and any value at all. A clean case uses only the first, so that handlers with many
 * filters (GET /api/devices has ten) still see valid combinations.
 */
function parameterText(parameter: Parameter, hints: Hints): fc.Arbitrary<{ fitting: string; any: string }> {
  const options = { hints, corrupt: false, partial: false, maxString: MAX_URL_TEXT };
  const fitting = valueFor(parameter.schema, parameter.name, options).map((v) => percentEncode(textOf(v)));
  const any = fc.oneof(
    { weight: 5, arbitrary: fitting },
    { weight: 4, arbitrary: nastyString(MAX_URL_TEXT).map(percentEncode) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_URL_TOKENS) },
  );
  return fc.record({ fitting, any });
}

function urlFor(operation: Operation, hints: Hints): fc.Arbitrary<string> {
  const pathParameters = operation.parameters.filter((p) => p.in === 'path');
  const queryParameters = operation.parameters.filter((p) => p.in === 'query');
  const pathValues = fc.tuple(...pathParameters.map((p) => parameterText(p, hints)));
  // Absent, once, or repeated (`?limit=1&limit=2`).
  const queryValues = fc.tuple(
    ...queryParameters.map((p) => fc.option(fc.array(parameterText(p, hints), { minLength: 1, maxLength: 2 }), { freq: 2, nil: [] })),
  );
  const strays = fc.oneof(
    { weight: 6, arbitrary: fc.constant([] as string[]) },
    { weight: 1, arbitrary: fc.array(fc.constantFrom(...RAW_QUERY_PIECES), { minLength: 1, maxLength: 2 }) },
  );
  return fc.tuple(fc.boolean(), pathValues, queryValues, strays).map(([clean, pathTexts, queryTexts, stray]) => {
    const pick = (t: { fitting: string; any: string }) => (clean ? t.fitting : t.any);
    let path = operation.path;
    pathParameters.forEach((p, i) => {
      path = path.replace(`{${p.name}}`, pick(pathTexts[i]));
    });
    const pairs = queryParameters.flatMap((p, i) => (clean ? queryTexts[i].slice(0, 1) : queryTexts[i]).map((t) => `${p.name}=${pick(t)}`));
    const query = clean ? pairs : [...pairs, ...stray];
    return query.length > 0 ? `${path}?${query.join('&')}` : path;
  });
}

interface BodyPart {
  body?: string | Uint8Array<ArrayBuffer>;
  contentType: string | null;
  wrongContentType: boolean;
}

const INVALID_JSON = [
  '',
  '{',
  '}',
  '{"a":}',
  "{'a':1}",
  '{"a":1,}',
  '[1,]',
  'undefined',
  'NaN',
  '{"a":NaN}',
  '\ufeff{}',
  '{"a":"\\x41"}',
  '{"a":1}{"b":2}',
  '{"a":1} trailing',
  '{"a":"unterminated',
  '[[[[[',
  '{"a":01}',
  '{"a":.5}',
  '{"a":+1}',
  'nul',
  '"\\u00"',
  '{"\\u0000":1}',
];
/** Byte sequences that are not UTF-8: a stray byte, an overlong NUL, an encoded surrogate, a 5-byte form. */
const INVALID_UTF8 = [[0xff], [0xfe, 0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82]];

const encoder = new TextEncoder();

function bodyFor(operation: Operation, hints: Hints): fc.Arbitrary<BodyPart> {
  const schema = operation.body;
  const contentType = fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...JSON_CONTENT_TYPES).map((type) => ({ type, wrong: false })) },
    { weight: 2, arbitrary: fc.constantFrom(...WRONG_CONTENT_TYPES).map((type) => ({ type, wrong: true })) },
    { weight: 2, arbitrary: fc.constantFrom(...FOREIGN_CHARSETS).map((type) => ({ type, wrong: true })) },
    { weight: 1, arbitrary: fc.constant({ type: null as string | null, wrong: true }) },
  );
  // An open body (a partial document such as PUT /api/config) is generated from the shape of the answer.
  const open = schema && !schema.properties && schema.type === 'object' && operation.success;
  const shape = open ? operation.success : schema;
  const base = { hints, partial: Boolean(open), maxString: MAX_BODY_TEXT };
  const fieldNames = Object.keys(shape?.properties ?? {});
  const anyField = fieldNames.length > 0 ? fc.constantFrom(...fieldNames) : fc.constant('x');

  const text: fc.Arbitrary<string | Uint8Array<ArrayBuffer>> = fc.oneof(
    ...(shape
      ? [
          { weight: 20, arbitrary: valueFor(shape, 'body', { ...base, corrupt: false }).map(jsonText) },
          { weight: 40, arbitrary: valueFor(shape, 'body', { ...base, corrupt: true }).map(jsonText) },
        ]
      : []),
    { weight: 10, arbitrary: nastyJson(MAX_BODY_TEXT).map(jsonText) },
    { weight: 5, arbitrary: fc.tuple(anyField, deeplyNested).map(([k, v]) => jsonText(objectOf([[k, v]]))) },
    { weight: 5, arbitrary: fc.oneof(fc.constantFrom(...INVALID_JSON), fc.string()) },
    {
      weight: 5,
      arbitrary: fc.tuple(anyField, fc.constantFrom(...INVALID_UTF8)).map(([k, bytes]) => {
        const [head, tail] = [encoder.encode(`{${JSON.stringify(k)}:"a`), encoder.encode('b"}')];
        return new Uint8Array([...head, ...bytes, ...tail]);
      }),
    },
    // Just over the 1 MiB limit.
    { weight: 1, arbitrary: fc.constant(`{"x":"${'a'.repeat(1024 * 1024)}"}`) },
  );
  const withBody = fc.tuple(text, contentType).map(([body, type]) => ({ body, contentType: type.type, wrongContentType: type.wrong }));
  const without = fc.constant({ body: undefined, contentType: null, wrongContentType: false });
  if (schema) return fc.oneof({ weight: 12, arbitrary: withBody }, { weight: 1, arbitrary: without });
  if (operation.method === 'GET') return without;
  // Operations without a body still parse one when sent.
  return fc.oneof({ weight: 5, arbitrary: without }, { weight: 1, arbitrary: withBody });
}

/** Every request the fuzzer sends to `operation`. */
export function requestsFor(operation: Operation, hints: Hints): fc.Arbitrary<RequestPlan> {
  return fc
    .record({
      url: urlFor(operation, hints),
      auth: operation.public
        ? fc.oneof({ weight: 4, arbitrary: fc.constant('none') }, ...AUTH_MODES)
        : operation.agent
          ? fc.oneof(...AGENT_AUTH_MODES)
          : fc.oneof(...AUTH_MODES),
      garbage: GARBAGE_CREDENTIALS,
      noise: fc.oneof({ weight: 4, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: NOISE_HEADERS }),
      body: bodyFor(operation, hints),
    })
    .map(({ url, auth, garbage, noise, body }) => ({
      method: operation.method,
      url,
      auth,
      headers: { ...noise, ...(auth === 'garbage credentials' ? garbage : {}) },
      ...body,
    }));
}
