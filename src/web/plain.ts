// Server messages in plain words: "scanning.port_range: must be …" becomes "Port range: must be …"
// (or, under the port range field itself, just "must be …"), and a socket error code such as
// ECONNREFUSED becomes what it means. The server's `detail` stays exact for API users; the web
// interface shows it this way.

/** A 400 detail's setting path ("scanning.port_range", "config.to.1") and the message after it. */
const PATH = /^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*): (.*)$/s;

/** Path segments that say nothing to a person: containers of the fields they lead to. */
const CONTAINERS = new Set(['config', 'settings', 'body', 'query', 'params']);

/** Socket and name errors as node reports them, in words. */
const SOCKET_ERRORS: [RegExp, (m: RegExpMatchArray) => string][] = [
  [/\b(?:connect )?ECONNREFUSED ([^\s,;)]+)/, (m) => `nothing answered at ${m[1]} (connection refused)`],
  [/\bECONNREFUSED\b/, () => 'nothing answered there (connection refused)'],
  [/\bgetaddrinfo (?:ENOTFOUND|EAI_AGAIN) ([^\s,;)]+)/, (m) => `the name ${m[1]} could not be found (DNS)`],
  [/\bENOTFOUND\b/, () => 'the name could not be found (DNS)'],
  [/\b(?:connect )?ETIMEDOUT(?: ([^\s,;)]+))?/, (m) => (m[1] ? `${m[1]} did not answer in time` : 'no answer in time')],
  [/\bECONNRESET\b/, () => 'the other side closed the connection'],
  [/\b(?:connect )?EHOSTUNREACH(?: ([^\s,;)]+))?/, (m) => `${m[1] ?? 'the host'} cannot be reached (no route)`],
  [/\b(?:connect )?ENETUNREACH(?: ([^\s,;)]+))?/, (m) => `${m[1] ?? 'that network'} cannot be reached (no route to the network)`],
  [/\bCERT_HAS_EXPIRED\b/, () => 'its TLS certificate has expired'],
  [/\b(?:DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\b/, () => 'its TLS certificate is not trusted'],
];

/** `text` with socket error codes replaced by what they mean. */
export function plainSocketErrors(text: string): string {
  let out = text;
  for (const [pattern, words] of SOCKET_ERRORS) out = out.replace(pattern, (...args) => words(args.slice(0, -2) as RegExpMatchArray));
  return out;
}

/** The path a message names ("scanning.port_range"), and the rest; path null when it names none. */
export function splitPath(text: string): { path: string | null; message: string } {
  const m = text.match(PATH);
  return m ? { path: m[1], message: m[2] } : { path: null, message: text };
}

/** "notifications.channels.0.config.to.1" as a person reads it: "To, entry 2". */
export function pathLabel(path: string): string {
  const parts = path.split('.');
  let i = parts.length - 1;
  let entry: number | null = null;
  if (/^\d+$/.test(parts[i]) && i > 0) {
    entry = Number(parts[i]) + 1;
    i--;
  }
  while (i > 0 && (CONTAINERS.has(parts[i]) || /^\d+$/.test(parts[i]))) i--;
  if (CONTAINERS.has(parts[i])) return '';
  const word = parts[i].replace(/_/g, ' ');
  const label = word.charAt(0).toUpperCase() + word.slice(1);
  return entry === null ? label : `${label}, entry ${entry}`;
}

/** A message as the interface shows it: the setting named in words, socket codes explained. */
export function plainMessage(text: string): string {
  const { path, message } = splitPath(text);
  const plain = plainSocketErrors(message);
  const label = path ? pathLabel(path) : '';
  // "body: not well-formed XML" is about the whole request: the message alone says it.
  return label ? `${label}: ${plain}` : plain.charAt(0).toUpperCase() + plain.slice(1);
}

/**
 * The part of `error` that belongs under the field of `path` (a 400 naming that path, or a path
 * inside it): its message without the path. Null when the error is about something else.
 */
export function fieldMessage(error: unknown, ...paths: string[]): string | null {
  // An ApiError (api.ts, which imports this module): duck-typed to keep the imports one way.
  const answer = error as { status?: unknown; detail?: unknown } | null;
  if (!answer || answer.status !== 400 || typeof answer.detail !== 'string') return null;
  const { path, message } = splitPath(answer.detail);
  if (!path || !paths.some((p) => path === p || path.startsWith(`${p}.`))) return null;
  const entry = path.match(/\.(\d+)$/);
  const claimed = paths.find((p) => path === p || path.startsWith(`${p}.`))!;
  const prefix = entry && path !== claimed ? `Entry ${Number(entry[1]) + 1}: ` : '';
  return prefix + plainSocketErrors(message);
}

/** `error` unless one of `paths` shows it under its field (then null, so it is not shown twice). */
export function unlessField(error: unknown, ...paths: string[]): unknown {
  return fieldMessage(error, ...paths) === null ? error : null;
}
