// The UI's only way to the server: JSON over fetch with the session cookie.

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

type Query = Record<string, string | number | boolean | null | undefined>;

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  query?: Query;
  json?: unknown;
  /** A file sent as it is with this Content-Type (an nmap report: application/xml). */
  file?: { content: Blob; type: string };
  signal?: AbortSignal;
}

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

async function send(path: string, options: RequestOptions): Promise<Response> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (options.json !== undefined) headers['Content-Type'] = 'application/json';
  if (options.file) headers['Content-Type'] = options.file.type;
  let response: Response;
  try {
    response = await fetch(withQuery(path, options.query), {
      method: options.method ?? 'GET',
      headers,
      body: options.file ? options.file.content : options.json === undefined ? undefined : JSON.stringify(options.json),
      credentials: 'same-origin',
      signal: options.signal,
    });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new ApiError(0, 'Could not reach the Netwarden server. Check that it is running and that this device can reach it.');
  }
  if (!response.ok) {
    let body: Record<string, unknown> = {};
    try {
      body = (await response.json()) as Record<string, unknown>;
    } catch {
      // Not JSON (a proxy's error page, say): the status line is all there is.
    }
    const detail =
      typeof body.detail === 'string' && body.detail ? body.detail : `The server answered ${response.status} ${response.statusText}`.trim();
    if (response.status === 401 && !path.startsWith('/api/auth/')) window.dispatchEvent(new Event(SESSION_ENDED));
    throw new ApiError(response.status, detail, body);
  }
  return response;
}

export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const response = await send(path, options);
  return (await response.json()) as T;
}

/** A paged list: the items and the total from `X-Total-Count`. */
export async function apiPage<T>(path: string, query: Query = {}, signal?: AbortSignal): Promise<{ items: T[]; total: number }> {
  const response = await send(path, { query, signal });
  const items = (await response.json()) as T[];
  const total = Number(response.headers.get('X-Total-Count') ?? items.length);
  return { items, total };
}

/** The message to show for any failure, API or not. */
export function messageOf(error: unknown): string {
  if (error instanceof ApiError) return error.detail;
  if (error instanceof Error) return error.message;
  return String(error);
}
