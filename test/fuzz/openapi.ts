/**
 * The operations of the served OpenAPI document, in the shape the fuzzer needs: where each
 * parameter goes, the body schema, and whether the operation is public.
 */

/** The subset of OpenAPI 3.0 schema objects the service's document uses. */
export interface Schema {
  type?: 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object' | 'null';
  enum?: unknown[];
  const?: unknown;
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  minProperties?: number;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  anyOf?: Schema[];
  oneOf?: Schema[];
}

export interface Parameter {
  name: string;
  in: 'query' | 'path';
  required: boolean;
  schema: Schema;
}

export interface Operation {
  /** `POST /api/keys`: the operation's name in test titles and failure messages. */
  id: string;
  method: string;
  /** OpenAPI path template, e.g. `/api/devices/{device_id}`. */
  path: string;
  /** Answers without credentials (`security: []`). */
  public: boolean;
  /** An agent endpoint: only an agent token opens it (`security: [{ agentToken: [] }]`). */
  agent: boolean;
  parameters: Parameter[];
  /** Schema of the JSON request body, when the operation takes one. */
  body?: Schema;
  /** Schema of the success answer: describes what an open body (a partial document) may contain. */
  success?: Schema;
  /** Content types the success answer is declared with (`application/json`, or a download's type). */
  successTypes: string[];
}

interface OpenApiOperation {
  security?: unknown[];
  parameters?: Array<{ name: string; in: string; required?: boolean; schema: Schema }>;
  requestBody?: { content?: Record<string, { schema: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema: Schema }> }>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

export function operationsOf(doc: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const parameters = (op.parameters ?? [])
        .filter((p): p is Parameter => p.in === 'query' || p.in === 'path')
        .map((p) => ({ name: p.name, in: p.in, required: p.required === true, schema: p.schema }));
      const success = op.responses?.['200'] ?? op.responses?.['201'];
      operations.push({
        id: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        public: Array.isArray(op.security) && op.security.length === 0,
        agent: Array.isArray(op.security) && op.security.some((s) => typeof s === 'object' && s !== null && 'agentToken' in s),
        parameters,
        body: op.requestBody?.content?.['application/json']?.schema,
        success: success?.content?.['application/json']?.schema,
        successTypes: Object.keys(success?.content ?? { 'application/json': {} }),
      });
    }
  }
  return operations;
}
