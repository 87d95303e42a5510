/** src/web/api-types.ts, absolute. */
export const API_TYPES_FILE: string;

/** src/web/channel-configs.ts, absolute. */
export const CHANNEL_CONFIGS_FILE: string;

/** The OpenAPI document of the current sources, as served at /openapi.json. */
export function loadOpenApiDocument(): Promise<Record<string, unknown>>;

/** The TypeScript text openapi-typescript makes of a document, with the file's header. */
export function apiTypesSource(document: Record<string, unknown>): Promise<string>;

/** The document's channel config components (marked `x-channel-type`), by channel type. */
export function channelConfigsOf(document: Record<string, unknown>): Record<string, Record<string, unknown>>;

/** The TypeScript text of src/web/channel-configs.ts for a document, with the file's header. */
export function channelConfigsSource(document: Record<string, unknown>): string;

/** Writes src/web/api-types.ts and (when its text changes) src/web/channel-configs.ts from the current sources. */
export function generateApiTypes(): Promise<void>;
