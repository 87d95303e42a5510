// The UI's only way to the server: JSON over fetch with the session cookie, through openapi-fetch
// typed by the paths generated from the OpenAPI document (api-types.ts). A call names the route
// as the document does (`/api/devices/{device_id}`), its parameters and body are checked against
// the route's schemas, and its answer has the route's response type: no page states a shape itself.
//
//   const device = await answer(api.GET('/api/devices/{device_id}', { params: { path: { device_id } }, signal }));
//
// What every request shares is here: the cookie, the query written as the server reads it, and
// failures thrown as ApiError (the server's `detail`), a 401 ending the session (middleware below).
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './api-types';
import { plainMessage } from './plain';

/** An error answer from the API, with its `detail` text ready to show. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly body: Record<string, unknown> = {},
  ) {
    super(detail);
  }
}

/** Fired when an authenticated call answers 401: the session ended, the app shows the login page. */
export const SESSION_ENDED = 'netwarden:session-ended';

const UNREACHABLE = 'Could not reach the Netwarden server. Check that it is running and that this device can reach it.';

type Query = Record<string, unknown>;

/**
 * The query string of `query`: empty values (undefined, null, '') are left out, as the server
 * wants them absent. Every query parameter of the API is a string, a number or a boolean.
 */
function queryString(query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if ((typeof value === 'string' && value !== '') || typeof value === 'number' || typeof value === 'boolean') params.set(name, String(value));
  }
  return params.toString();
}

/** `path` with `query` (the UI's own addresses, download links). */
export function withQuery(path: string, query: Query = {}): string {
  const text = queryString(query);
  return text ? `${path}?${text}` : path;
}

/** An id chosen in a form or the address bar ('' for none), as a query parameter takes it. */
export function idParam(text: string): number | undefined {
  return text ? Number(text) : undefined;
}

/**
 * Turns every failure into an ApiError: an answer that is not ok (its `detail`; a 401 outside
 * /api/auth/ also ends the session) and a server that could not be reached. An aborted request
 * stays an AbortError, which callers that aborted it ignore.
 */
const failures: Middleware = {
  async onResponse({ response, schemaPath }) {
    if (response.ok) return undefined;
    let body: Record<string, unknown> = {};
    try {
      body = (await response.json()) as Record<string, unknown>;
    } catch {
      // Not JSON (a proxy's error page, say): the status line is all there is.
    }
    const detail =
      typeof body.detail === 'string' && body.detail ? body.detail : `The server answered ${response.status} ${response.statusText}`.trim();
    if (response.status === 401 && !schemaPath.startsWith('/api/auth/')) window.dispatchEvent(new Event(SESSION_ENDED));
    throw new ApiError(response.status, detail, body);
  },
  onError({ error }) {
    if ((error as Error).name === 'AbortError') return undefined;
    return new ApiError(0, UNREACHABLE);
  },
};

/** The API client: `api.GET(path, init)`, `api.POST(…)`, …; wrap the call in `answer` or `page`. */
export const api = createClient<paths>({
  credentials: 'same-origin',
  headers: { Accept: 'application/json' },
  querySerializer: queryString,
});
api.use(failures);

/** What a call of `api` resolves to when it succeeded (a failure was thrown by the middleware). */
type Answered<T> = Promise<{ data?: T; response: Response }>;

/** The body of a call's successful answer, with the type the route's schema gives it. */
export async function answer<T>(call: Answered<T>): Promise<T> {
  const { data } = await call;
  // Only ok answers get here; `data` is absent only for an answer without a body, which these routes do not give.
  return data as T;
}

/** A paged list: the items and the total from `X-Total-Count`. */
export async function page<T>(call: Answered<T[]>): Promise<{ items: T[]; total: number }> {
  const { data, response } = await call;
  const items = data ?? [];
  const total = Number(response.headers.get('X-Total-Count') ?? items.length);
  return { items, total };
}

/**
 * A file sent as it is with the request's own Content-Type (an nmap report): the document types
 * such a body as its text, and a Blob is that text unread, so a large report is never decoded.
 * Pass it with `bodySerializer: asIs`.
 */
export function fileBody(file: Blob): string {
  return file as unknown as string;
}

/** A body serializer that leaves the body alone (see fileBody). */
export const asIs = <T>(body: T): T => body;

/** The message to show for any failure, API or not, in plain words (plain.ts). */
export function messageOf(error: unknown): string {
  if (error instanceof ApiError) return plainMessage(error.detail);
  if (error instanceof Error) return plainMessage(error.message);
  return String(error);
}
