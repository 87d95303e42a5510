import Ajv, { type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

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
