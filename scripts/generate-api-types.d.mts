/** src/web/api-types.ts, absolute. */
export const API_TYPES_FILE: string;

/** The OpenAPI document of the current sources, as served at /openapi.json. */
export function loadOpenApiDocument(): Promise<Record<string, unknown>>;

/** The TypeScript text openapi-typescript makes of a document, with the file's header. */
export function apiTypesSource(document: Record<string, unknown>): Promise<string>;

/** Writes src/web/api-types.ts from the current sources. */
export function generateApiTypes(): Promise<void>;
