/**
 * Arbitrary values for the fuzzer: values a schema accepts (steered by known-good hints such as
 * existing device ids), and hostile ones (wrong types, extreme numbers, odd Unicode, NUL, lone
 * surrogates, prototype keys, deep nesting). JSON is built as text by `jsonText`, so a body can
 * hold what `JSON.stringify` cannot write: numbers beyond a double, a `__proto__` key, 100,000
 * levels of nesting.
 */
import fc from 'fast-check';
import type { Schema } from './openapi.js';

/** JSON text inserted verbatim. */
export class RawJson {
  constructor(readonly text: string) {}
}

export type Json = null | boolean | number | string | RawJson | Json[] | { [key: string]: Json };

export function jsonText(value: Json): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .map((k) => `${JSON.stringify(k)}:${jsonText(value[k])}`)
      .join(',')}}`;
  }
  // Well-formed JSON.stringify escapes lone surrogates (`"\ud800"`), so the text stays valid UTF-8.
  return JSON.stringify(value) ?? 'null';
}

/** An object whose keys may include `__proto__` as an own property (an object literal would set the prototype). */
export function objectOf(entries: Array<[string, Json]>): { [key: string]: Json } {
  const out: { [key: string]: Json } = {};
  for (const [key, value] of entries) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  return out;
}

/** Known-good values by parameter or field name (`device_ids[]` for the items of `device_ids`). */
export type Hints = Record<string, fc.Arbitrary<Json>>;

/** Text that must never reach a response unless the server leaks its internals; the fuzzer never sends it. */
export const LEAK_MARKERS = ['/work/', 'node_modules', 'at Object.', '.ts:'];

const LONE_SURROGATES = ['\ud800', '\udbff', '\udc00', '\udfff', 'a\ud83d', '\ude00b', '\udc00\ud800'];
const ODD_UNICODE = [
  'é',
  'e\u0301',
  '😀',
  '👩‍👩‍👧',
  '\u202e',
  '\u200b',
  '\ufeff',
  'דף',
  '中文',
  '\u0085',
  '\u2028',
  '\uffff',
  '\ufffd',
  '𝔘𝔫𝔦',
  'İ',
  'ß',
  'ﬃ',
  'K',
];
const NUL_TEXT = ['\u0000', 'a\u0000', '\u0000b', 'x\u0000y', '\u0000\u0000'];
const NUMERIC_TEXT = [
  '0',
  '-0',
  '-1',
  '1.5',
  '-1.5',
  '1e308',
  '1e309',
  '-1e308',
  '9007199254740993',
  '99999999999999999999999999',
  '2147483647',
  '2147483648',
  '-2147483649',
  '4294967296',
  '0x10',
  '0b1',
  '1_000',
  'NaN',
  'Infinity',
  '-Infinity',
  '+1',
  ' 1',
  '1 ',
  '01',
  '1.',
  '.5',
  '1e-7',
  '١٢',
];
const SPECIAL_TEXT = [
  '',
  ' ',
  'true',
  'false',
  'TRUE',
  'yes',
  'null',
  'undefined',
  '[]',
  '{}',
  '[object Object]',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  '..',
  '../../etc/passwd',
  '%',
  '%%',
  '\\',
  "'",
  '"',
  "' OR 1=1 --",
  '; DROP TABLE devices; --',
  '<script>alert(1)</script>',
  '${7*7}',
  '*',
  '_',
  '%_%',
  '\n',
  '\r\n',
  '\t',
  '127.0.0.1',
  '127.0.0.1/33',
  '10.66.0.0/24',
  '0.0.0.0/0',
  '255.255.255.255',
  '1.2.3',
  '1.2.3.4.5',
  '::1',
  'fe80::1%eth0',
  '256.1.1.1',
  '01.02.03.04',
];

/** Hostile text: odd Unicode, lone surrogates, NUL, number-like and special strings, long runs. */
export function nastyString(maxLength: number): fc.Arbitrary<string> {
  // Built from the length, so a failing case shrinks to the shortest length that still fails.
  const length = fc.integer({ min: 65, max: maxLength });
  const long = fc.oneof(
    length.map((n) => 'x'.repeat(n)),
    length.map((n) => 'é'.repeat(n)),
    length.chain((n) => fc.string({ minLength: n, maxLength: n })),
  );
  const mixed = (pool: string[]) =>
    fc.array(fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom(...pool)), { minLength: 1, maxLength: 4 }).map((parts) => parts.join(''));
  return fc.oneof(
    { weight: 3, arbitrary: fc.string() },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme' }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary' }) },
    { weight: 2, arbitrary: mixed(LONE_SURROGATES) },
    { weight: 2, arbitrary: mixed(NUL_TEXT) },
    { weight: 2, arbitrary: mixed(ODD_UNICODE) },
    { weight: 2, arbitrary: fc.constantFrom(...NUMERIC_TEXT) },
    { weight: 3, arbitrary: fc.constantFrom(...SPECIAL_TEXT) },
    { weight: 2, arbitrary: long },
  );
}

const EXTREME_NUMBERS = [
  0, -1, 1.5, -1.5, 0.1, 1e308, -1e308, 2_147_483_647, 2_147_483_648, -2_147_483_649, 4_294_967_296, 9_007_199_254_740_991, 1e21, 5e-324,
];
/** Numbers no JavaScript number holds exactly, and spellings of ordinary ones. */
const RAW_NUMBERS = ['1e400', '-1e400', '123456789012345678901234567890', '1.0', '-0', '1E2', '0.0000001', '2.0e0'];
const PROTO_OBJECTS = [
  '{"__proto__":{"isAdmin":true}}',
  '{"__proto__":null}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '{"prototype":{}}',
  '{"toString":1,"hasOwnProperty":"x","valueOf":[]}',
];

/** Nested arrays or objects, up to 100,000 levels (half a megabyte of JSON). */
export const deeplyNested: fc.Arbitrary<Json> = fc
  .tuple(fc.constantFrom(64, 1000, 20_000, 100_000), fc.boolean())
  .map(([depth, arrays]) => new RawJson(arrays ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '0' + '}'.repeat(depth)));

/** Any hostile JSON value. */
export function nastyJson(maxString: number): fc.Arbitrary<Json> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom<Json>(null, true, false, ...EXTREME_NUMBERS) },
    { weight: 1, arbitrary: fc.integer() },
    { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_NUMBERS).map((t) => new RawJson(t)) },
    { weight: 5, arbitrary: nastyString(maxString) },
    { weight: 1, arbitrary: fc.constantFrom<Json>([], {}, [null], [[]], ['']) },
    // Long lists of small positive integers: up to and past the 1000-id limits.
    { weight: 1, arbitrary: fc.integer({ min: 2, max: 1500 }).map((n) => Array.from({ length: n }, (_, i) => i + 1)) },
    { weight: 1, arbitrary: fc.constantFrom(...PROTO_OBJECTS).map((t) => new RawJson(t)) },
    { weight: 1, arbitrary: deeplyNested },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json> },
  );
}

const EXTRA_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'id', 'is_admin', ''];

export interface ValueOptions {
  hints: Hints;
  /** Replace some values with hostile ones, add unknown fields, drop required ones. */
  corrupt: boolean;
  /** Every object property is optional and may be `null` (a partial update such as PUT /api/config). */
  partial: boolean;
  /** Longest hostile string. */
  maxString: number;
}

/** A value for `schema` (named `name`), hostile in places when `options.corrupt`. */
export function valueFor(schema: Schema, name: string, options: ValueOptions): fc.Arbitrary<Json> {
  const fitting = fittingValue(schema, name, options);
  if (!options.corrupt) return fitting;
  return fc.oneof({ weight: 4, arbitrary: fitting }, { weight: 1, arbitrary: nastyJson(options.maxString) });
}

function fittingValue(schema: Schema, name: string, options: ValueOptions): fc.Arbitrary<Json> {
  const own = structuredValue(schema, name, options);
  const hint = options.hints[name];
  const base = hint ? fc.oneof({ weight: 3, arbitrary: hint }, { weight: 1, arbitrary: own }) : own;
  return schema.nullable ? fc.oneof({ weight: 5, arbitrary: base }, { weight: 1, arbitrary: fc.constant(null) }) : base;
}

function structuredValue(schema: Schema, name: string, options: ValueOptions): fc.Arbitrary<Json> {
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((s) => fittingValue(s, name, options)));
  if (schema.const !== undefined) return fc.constant(schema.const as Json);
  if (schema.enum) return fc.constantFrom(...(schema.enum as Json[]));
  switch (schema.type) {
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number': {
      const min = Math.max(schema.minimum ?? -1_000_000, -2_147_483_648);
      const max = Math.min(schema.maximum ?? 1_000_000, 2_147_483_647);
      const inRange = schema.type === 'integer' ? fc.integer({ min, max }) : fc.double({ min, max, noNaN: true });
      return fc.oneof(inRange, fc.constantFrom(min, max));
    }
    case 'string':
      return stringFor(schema);
    case 'array': {
      const items = schema.items ? valueFor(schema.items, `${name}[]`, options) : (fc.jsonValue({ maxDepth: 1 }) as fc.Arbitrary<Json>);
      const minLength = schema.minItems ?? 0;
      const maxLength = Math.max(minLength, Math.min(schema.maxItems ?? 4, 4));
      return schema.uniqueItems
        ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => jsonText(v) })
        : fc.array(items, { minLength, maxLength });
    }
    case 'object':
      return objectFor(schema, options);
    default:
      return fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>;
  }
}

function stringFor(schema: Schema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = schema.maxLength ?? 40;
  if (schema.format === 'date-time') {
    return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
  }
  if (schema.pattern) {
    return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= minLength && s.length <= maxLength);
  }
  // NUL and lone surrogates are valid in a schema string too: they must reach the handlers and the stores.
  const unit = fc.oneof(
    { weight: 10, arbitrary: fc.string({ minLength: 1, maxLength: 1 }) },
    { weight: 2, arbitrary: fc.constantFrom(...ODD_UNICODE) },
    { weight: 1, arbitrary: fc.constantFrom('\u0000', ...LONE_SURROGATES) },
  );
  return fc.string({ minLength, maxLength: Math.max(minLength, Math.min(maxLength, 40)), unit });
}

function objectFor(schema: Schema, options: ValueOptions): fc.Arbitrary<Json> {
  const properties = schema.properties ?? {};
  const keys = Object.keys(properties);
  if (keys.length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>, { maxKeys: 3 });
  const field = (key: string) => {
    const value = valueFor(properties[key], key, options);
    return options.partial ? fc.oneof({ weight: 6, arbitrary: value }, { weight: 1, arbitrary: fc.constant(null) }) : value;
  };
  const required = options.partial ? [] : (schema.required ?? []).filter((k) => keys.includes(k));
  const record = options.partial
    ? // A partial update names a key or two: one that named every key would nearly always hold something invalid.
      fc
        .subarray(keys, { minLength: 1, maxLength: Math.min(2, keys.length) })
        .chain((chosen) => fc.record(Object.fromEntries(chosen.map((k) => [k, field(k)]))))
    : fc
        .record(Object.fromEntries(keys.map((k) => [k, field(k)])), { requiredKeys: required })
        .filter((o) => Object.keys(o).length >= (schema.minProperties ?? 0));
  if (!options.corrupt) return record.map((o) => objectOf(Object.entries(o) as Array<[string, Json]>));
  const extras = fc.oneof(
    { weight: 4, arbitrary: fc.constant([] as Array<[string, Json]>) },
    {
      weight: 1,
      arbitrary: fc.array(fc.tuple(fc.oneof(fc.constantFrom(...EXTRA_KEYS), fc.string({ maxLength: 12 })), nastyJson(options.maxString)), {
        minLength: 1,
        maxLength: 2,
      }),
    },
  );
  const dropped =
    required.length > 0
      ? fc.oneof({ weight: 5, arbitrary: fc.constant([] as string[]) }, { weight: 1, arbitrary: fc.subarray(required, { minLength: 1 }) })
      : fc.constant([] as string[]);
  return fc
    .tuple(record, extras, dropped)
    .map(([o, extra, drop]) => objectOf([...(Object.entries(o) as Array<[string, Json]>).filter(([k]) => !drop.includes(k)), ...extra]));
}
