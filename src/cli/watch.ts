/**
 * `netwarden watch`: follows a running server's live events (GET /api/events, CONTRACT §10) with
 * an API key and prints one line per event as it comes, or raw JSON lines with --json. When the
 * connection drops it reconnects with Last-Event-ID, so the events it missed meanwhile (from the
 * last 1,000 the server kept) are printed too.
 *
 * Exit status: 2 for bad usage (no key, a malformed --server URL); 1 when the server refuses the
 * key (401), answers something other than an event stream, or cannot be reached at the start.
 * Once connected it runs until interrupted, however often the connection drops.
 */
import type { Command } from 'commander';
import { readEnvironment } from '../config/environment.js';
import { SEVERITY_RANK, type RiskLevel } from '../core/severity.js';
import { RISK_REASON_WORDS, durationWords } from '../notify/compose.js';
import { CliError, action, loadConfig, messageOf, printable, usageError } from './common.js';
import { SseParser, type SseMessage } from './sse.js';

/** The first wait before reconnecting; doubled after each failed attempt up to RECONNECT_MAX_MS. */
const RECONNECT_MIN_MS = 1000;
const RECONNECT_MAX_MS = 30_000;
/** The server sends a comment every 15 s: this long without a byte means the connection is dead. */
const IDLE_MS = 60_000;
/** Progress lines of one scan are printed at most this often (and whenever its phase changes). */
const PROGRESS_EVERY_MS = 5000;

interface WatchOptions {
  server?: string;
  apiKey?: string;
  json?: boolean;
  lastEventId?: string;
}

export function registerWatchCommand(program: Command): void {
  program
    .command('watch')
    .description("Print a running server's live events (scans, progress, changes, device updates) as they come")
    .option('--server <url>', 'the server to watch (default: http://127.0.0.1:<port>, the port configured by NETWARDEN_PORT or the config file)')
    .option(
      '--api-key <key>',
      'API key to authenticate with (default: the NETWARDEN_API_KEY environment variable, which keeps it out of the process list)',
    )
    .option('--json', 'print each event as one line of JSON: {"id","event","data"}')
    .option('--last-event-id <id>', 'start by printing the events after this id (of the last 1,000 the server kept)')
    .action(
      action(async (options: WatchOptions) => {
        const key = options.apiKey ?? readEnvironment().NETWARDEN_API_KEY;
        if (!key) throw usageError('no API key: give --api-key KEY or set NETWARDEN_API_KEY (create one with `netwarden keys create watch`)');
        const endpoint = eventsUrl(options.server ?? `http://127.0.0.1:${loadConfig().port}`);
        const lastEventId = options.lastEventId;
        if (lastEventId !== undefined && !/^\d{1,15}$/.test(lastEventId)) {
          throw usageError(`--last-event-id must be an event id (a whole number), not '${printable(lastEventId)}'`);
        }
        await follow(endpoint, key, lastEventId ?? null, new EventPrinter(options.json === true));
      }),
    );
}

/** `<server>/api/events`, keeping a path prefix (a server behind a reverse proxy at /netwarden/). */
function eventsUrl(server: string): URL {
  let base: URL;
  try {
    base = new URL(server);
  } catch {
    throw usageError(`--server must be an http:// or https:// URL such as http://127.0.0.1:8080, not '${printable(server)}'`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw usageError(`--server must be an http:// or https:// URL such as http://127.0.0.1:8080, not '${printable(server)}'`);
  }
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  base.search = '';
  base.hash = '';
  return new URL('api/events', base);
}

type Attempt =
  /** The server answered but not with a stream: nothing a retry would change. */
  | { kind: 'refused'; message: string }
  /** No stream (unreachable, 5xx) or the stream broke; `connected` when it had been open. */
  | { kind: 'lost'; connected: boolean; reason: string };

/** Connects, prints, and reconnects with the last event id whenever the connection drops. */
async function follow(endpoint: URL, key: string, startAfter: string | null, printer: EventPrinter): Promise<void> {
  const parser = new SseParser();
  parser.lastEventId = startAfter;
  let everConnected = false;
  let delay = RECONNECT_MIN_MS;
  for (;;) {
    const attempt = await streamOnce(
      endpoint,
      key,
      parser,
      () => {
        process.stderr.write(`watching ${endpoint.href}${parser.lastEventId !== null ? ` (from event ${parser.lastEventId})` : ''}\n`);
        everConnected = true;
        delay = parser.retryMs ?? RECONNECT_MIN_MS;
      },
      printer,
    );
    if (attempt.kind === 'refused') throw new CliError(attempt.message);
    if (!everConnected) throw new CliError(`cannot watch ${endpoint.href}: ${attempt.reason}`);
    process.stderr.write(`connection lost (${attempt.reason}); reconnecting in ${Math.round(delay / 100) / 10} s\n`);
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, RECONNECT_MAX_MS);
  }
}

async function streamOnce(endpoint: URL, key: string, parser: SseParser, onOpen: () => void, printer: EventPrinter): Promise<Attempt> {
  const controller = new AbortController();
  let idle: NodeJS.Timeout | undefined;
  const stillAlive = () => {
    clearTimeout(idle);
    idle = setTimeout(() => controller.abort(new Error(`nothing received for ${IDLE_MS / 1000} s`)), IDLE_MS);
  };
  stillAlive();
  let connected = false;
  try {
    const headers: Record<string, string> = { Accept: 'text/event-stream', 'X-API-Key': key };
    if (parser.lastEventId !== null) headers['Last-Event-ID'] = parser.lastEventId;
    const res = await fetch(endpoint, { headers, signal: controller.signal, redirect: 'error' });
    if (res.status === 401) {
      return {
        kind: 'refused',
        message: `the server refused the API key (401 Not authenticated): check --api-key or NETWARDEN_API_KEY; a revoked or expired key is refused too`,
      };
    }
    if (res.status >= 500) return { kind: 'lost', connected, reason: `the server answered ${res.status}` };
    if (res.status !== 200) return { kind: 'refused', message: `${endpoint.href} answered ${res.status}: ${await detailOf(res)}` };
    const type = res.headers.get('content-type') ?? '';
    if (!type.startsWith('text/event-stream') || !res.body) {
      return {
        kind: 'refused',
        message: `${endpoint.href} did not answer with an event stream (Content-Type ${printable(type) || 'missing'}); is it a Netwarden server?`,
      };
    }
    connected = true;
    onOpen();
    const decoder = new TextDecoder();
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      stillAlive();
      for (const message of parser.push(decoder.decode(value, { stream: true }))) printer.print(message);
    }
    return { kind: 'lost', connected, reason: 'the server closed the stream' };
  } catch (err) {
    const reason = controller.signal.aborted ? messageOf(controller.signal.reason) : causeOf(err);
    return { kind: 'lost', connected, reason };
  } finally {
    clearTimeout(idle);
  }
}

/** fetch's own message is "fetch failed"; the reason (ECONNREFUSED, …) is its cause. */
function causeOf(err: unknown): string {
  const cause = (err as { cause?: unknown }).cause;
  if (cause instanceof Error) return (cause as NodeJS.ErrnoException).code ?? cause.message;
  return messageOf(err);
}

async function detailOf(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const detail = (JSON.parse(text) as { detail?: unknown }).detail;
    if (typeof detail === 'string') return printable(detail);
  } catch {
    // not JSON
  }
  return printable(text.slice(0, 200)) || 'no details';
}

/** Turns events into output lines: readable ones, or JSON lines with --json. */
export class EventPrinter {
  private readonly lastProgress = new Map<number, { at: number; phase: string }>();

  constructor(
    private readonly json: boolean,
    private readonly write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
    private readonly now: () => Date = () => new Date(),
  ) {}

  print(message: SseMessage): void {
    let data: unknown;
    try {
      data = JSON.parse(message.data);
    } catch {
      data = message.data;
    }
    if (this.json) {
      this.write(JSON.stringify({ id: message.id === null ? null : Number(message.id), event: message.event, data }));
      return;
    }
    const text = this.describe(message.event, data);
    if (text !== null) this.write(`${this.now().toTimeString().slice(0, 8)} ${text}`);
  }

  /** One line for an event, or null for a progress event within the rate limit. */
  describe(event: string, data: unknown): string | null {
    const d = record(data);
    const s = text;
    switch (event) {
      case 'scan_queued':
      case 'scan_started': {
        const kind = d.scan_type === 'device' ? ', device scan' : '';
        return `scan ${s(d.scan_id)} ${event === 'scan_queued' ? 'queued' : 'started'} ${s(d.subnet)} (${s(d.profile)}${kind})`;
      }
      case 'scan_progress': {
        const p = record(d.progress);
        const scanId = Number(d.scan_id);
        const last = this.lastProgress.get(scanId);
        const at = this.now().getTime();
        if (last && last.phase === p.phase && at - last.at < PROGRESS_EVERY_MS) return null;
        this.lastProgress.set(scanId, { at, phase: String(p.phase) });
        const eta = typeof p.eta_seconds === 'number' ? `, about ${Math.round(p.eta_seconds)} s left` : '';
        return `scan ${s(d.scan_id)} ${s(p.phase)} ${Math.floor(Number(p.percent) || 0)}% (${s(p.hosts_found)} hosts found, ${s(p.hosts_done)} done${eta})`;
      }
      case 'scan_finished': {
        this.lastProgress.delete(Number(d.scan_id));
        const head = `scan ${s(d.scan_id)} ${s(d.status)} ${s(d.subnet)}`;
        if (d.status === 'completed') {
          const duration = typeof d.duration_seconds === 'number' ? ` in ${d.duration_seconds.toFixed(1)} s` : '';
          return `${head}: ${s(d.devices_found)} device(s)${duration}`;
        }
        return d.error ? `${head}: ${s(d.error)}` : head;
      }
      case 'change': {
        const port = d.port !== null && d.port !== undefined ? ` ${s(d.port)}/${s(d.protocol)}` : '';
        return `change ${s(d.severity)} ${s(d.change_type)} ${s(d.device_ip)}${port} ${s(d.description)}`;
      }
      case 'device_updated': {
        const label = d.label ? ` "${s(d.label)}"` : '';
        const presence = d.online ? 'online' : `offline (missed ${s(d.missed_scans)} scans)`;
        const ports = Array.isArray(d.open_ports) && d.open_ports.length > 0 ? d.open_ports.map(String).join(',') : 'none';
        return `device ${s(d.id)} ${s(d.ip_address)}${label} ${presence}, risk ${s(d.risk_level)} (${s(d.risk_score)}), open ports ${s(ports)}`;
      }
      case 'device_new': {
        const vendor = d.vendor ? ` (${s(d.vendor)})` : '';
        return `new device ${s(d.id)} ${deviceWords(d)}${vendor}: acknowledge it if it is yours`;
      }
      case 'device_offline': {
        const last = d.last_seen ? `, last seen ${s(d.last_seen)}` : '';
        return `device ${s(record(d.device).id)} ${deviceWords(record(d.device))} went offline${last}`;
      }
      case 'device_online': {
        const away = typeof d.away_seconds === 'number' ? ` after ${durationWords(d.away_seconds)} away` : '';
        return `device ${s(record(d.device).id)} ${deviceWords(record(d.device))} is back online${away}`;
      }
      case 'risk_changed': {
        const before = record(d.before);
        const after = record(d.after);
        const rank = (r: Record<string, unknown>) => SEVERITY_RANK[r.level as RiskLevel] ?? 0;
        // Lower is good news: a closed telnet port reads as the risk going down, not as a port gone.
        const down = rank(after) < rank(before) || (rank(after) === rank(before) && Number(after.score) < Number(before.score));
        const name = d.name ? ` "${s(d.name)}"` : '';
        const why = RISK_REASON_WORDS[d.reason as keyof typeof RISK_REASON_WORDS] ?? s(d.reason);
        return `risk of device ${s(d.device_id)} ${s(d.ip_address)}${name} went ${down ? 'down' : 'up'}: ${s(before.level)} (${s(before.score)}) -> ${s(after.level)} (${s(after.score)}), ${why}`;
      }
      default:
        return `${printable(event)} ${printable(typeof data === 'string' ? data : JSON.stringify(data))}`;
    }
  }
}

/** A device as the lines name it: `10.0.0.7 "NAS"`, `10.0.0.7 (nas.lan)` or the address. */
function deviceWords(d: Record<string, unknown>): string {
  if (d.label) return `${text(d.ip_address)} "${text(d.label)}"`;
  if (d.hostname) return `${text(d.ip_address)} (${text(d.hostname)})`;
  return text(d.ip_address);
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

/** A value from an event, printable on a terminal: `-` for none. */
function text(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'string') return printable(value);
  return printable(JSON.stringify(value));
}
