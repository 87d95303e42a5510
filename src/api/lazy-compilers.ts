/**
 * Route schemas compiled when a route is first used rather than all at start-up. Fastify compiles
 * every route's validators and response serializers when the server gets ready; most routes of
 * an idle service are never called, and their generated code (some 2 MB of serializer source
 * alone, with its compiled functions) would stay in its heap for good. The compiled functions are
 * the same ones Fastify would have built, so requests are validated and answers serialized exactly
 * as before; only the first request of a route pays for its compilation (a few milliseconds).
 */
import { createRequire } from 'node:module';
import type { FastifySchemaCompiler, FastifySerializerCompiler, FastifyServerOptions } from 'fastify';

type SerializerFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>;

/**
 * Fastify's own serializer factory (fast-json-stringify), loaded from where Fastify loads it, so
 * it is the very module and version Fastify would use, with every route's compile deferred to the
 * route's first answer.
 */
export function lazySerializerFactory(): SerializerFactory {
  const fastifyRequire = createRequire(createRequire(import.meta.url).resolve('fastify'));
  const selector = fastifyRequire('@fastify/fast-json-stringify-compiler') as () => SerializerFactory;
  const build = selector();
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options) as FastifySerializerCompiler<unknown>;
    return (routeSchema) => {
      let serialize: ((data: unknown) => string) | undefined;
      return (data: unknown) => (serialize ??= compile(routeSchema as Parameters<typeof compile>[0]))(data);
    };
  };
}

/** A validator function as Fastify reads it: Ajv's, with the errors of its last call and its schema environment. */
type Validator = ((data: unknown, context?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };

/**
 * `compiler` (Ajv) with each schema compiled on its first use. Fastify reads `schemaEnv` (to let
 * Ajv coerce the request part in place) and `errors` from the function: both are the compiled
 * function's, read through.
 */
export function lazyValidatorCompiler(compiler: FastifySchemaCompiler<unknown>): FastifySchemaCompiler<unknown> {
  return (routeSchema) => {
    let compiled: Validator | undefined;
    const real = () => (compiled ??= compiler(routeSchema) as Validator);
    const validate = ((data: unknown, context?: unknown) => (context === undefined ? real()(data) : real()(data, context))) as Validator;
    Object.defineProperty(validate, 'errors', { get: () => real().errors });
    Object.defineProperty(validate, 'schemaEnv', { get: () => real().schemaEnv });
    return validate as ReturnType<FastifySchemaCompiler<unknown>>;
  };
}
