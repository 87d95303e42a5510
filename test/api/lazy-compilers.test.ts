import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { lazySerializerFactory, lazyValidatorCompiler } from '../../src/api/lazy-compilers.js';
import { createValidatorCompiler } from '../../src/api/validation.js';

const Query = Type.Object(
  { limit: Type.Integer({ minimum: 1, maximum: 5 }), tags: Type.Optional(Type.Array(Type.String())) },
  { additionalProperties: false },
);
const Answer = Type.Object({ id: Type.Integer(), name: Type.String(), when: Type.Union([Type.String(), Type.Null()]) });

describe('route schemas compiled on first use', () => {
  it('compiles a validator only when it first validates, and then answers as the compiler it wraps', () => {
    const eager = createValidatorCompiler();
    let compiles = 0;
    let inner: { schemaEnv?: unknown } | undefined;
    const lazy = lazyValidatorCompiler((route) => {
      compiles++;
      const compiled = eager(route);
      inner = compiled as unknown as { schemaEnv?: unknown };
      return compiled;
    });
    const route = { schema: Query, method: 'GET', url: '/x', httpPart: 'querystring' } as const;
    const validate = lazy(route) as ((data: unknown, context?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };
    const reference = eager(route) as typeof validate;
    expect(compiles).toBe(0);

    // Query strings are coerced in place, with the errors of the last call read through.
    const good = { limit: '3', tags: 'a' };
    expect(validate(good)).toBe(true);
    expect(compiles).toBe(1);
    expect(good).toEqual({ limit: 3, tags: ['a'] });
    for (const bad of [{ limit: '9' }, { limit: 'x' }, { limit: 1, other: 1 }]) {
      expect(validate({ ...bad })).toBe(false);
      expect(reference({ ...bad })).toBe(false);
      expect(validate.errors).toEqual(reference.errors);
    }
    // Fastify passes the parent so Ajv can replace a coerced root: the compiled function's schemaEnv says so.
    expect(inner?.schemaEnv).toBeDefined();
    expect(validate.schemaEnv).toBe(inner?.schemaEnv);
    expect(compiles).toBe(1);
  });

  it("serializes exactly as Fastify's own serializer, compiling on the first answer", () => {
    const build = lazySerializerFactory();
    const compile = build({}, {});
    const serialize = compile({ schema: Answer, method: 'GET', url: '/x', httpStatus: '200' });
    // Properties the schema does not name are left out; the schema's order is kept.
    expect(serialize({ name: 'a"b', extra: 1, id: 7, when: null })).toBe('{"id":7,"name":"a\\"b","when":null}');
    expect(serialize({ id: 8, name: 'c', when: '2026-01-01' })).toBe(JSON.stringify({ id: 8, name: 'c', when: '2026-01-01' }));
  });
});
