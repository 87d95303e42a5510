/**
 * The logger, set up once per process: `createLogger` for the service, the worker and the agent
 * (JSON lines on stdout), `commandLogger` for the one-off commands (warnings on stderr). Nothing
 * else configures pino.
 */
import { fstatSync } from 'node:fs';
import { Socket } from 'node:net';
import pino, { type Logger } from 'pino';
import { isoTime } from './util/iso-time.js';

/** Log lines are written in chunks of about this many bytes (one write call per chunk)... */
const LOG_CHUNK_BYTES = 16 * 1024;
/** ...and no later than this after they were logged, so an idle service's log is never stale. */
const LOG_FLUSH_MS = 200;
/** Most bytes held for a stdout that does not take them. */
const LOG_BUFFER_MAX_BYTES = 16 * 1024 * 1024;
/** At exit, a stdout nobody reads (a full pipe) is retried this long before its lines are dropped. */
const LOG_EXIT_RETRY_MS = 2000;

/** pino's `timestamp` option: the `time` field of every line, as `pino.stdTimeFunctions.isoTime` writes it. */
const timeField = (): string => `,"time":"${isoTime()}"`;

/**
 * The production logger: JSON lines to stdout through an asynchronous, buffered destination, so a
 * request never waits for a write(2) and busy periods cost one write per 16 KiB rather than one per
 * line. Nothing is lost on the way out: `flushLog()` runs on shutdown, and the destination is
 * flushed synchronously when the process exits (pino registers that; see flushLogSync below for
 * the guard around it). A level of `silent` opens no destination at all.
 */
export function createLogger(level: string): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'netwarden' },
    timestamp: timeField,
    // Defence in depth: nothing logs these today, and nothing should start to.
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie', 'res.headers["set-cookie"]', '*.password', '*.key'],
      censor: '[redacted]',
    },
  };
  if (level === 'silent') return pino(options);
  makeStdoutNonBlocking();
  let exiting = false;
  let exitRetryUntil = 0;
  const destination = pino.destination({
    dest: 1,
    sync: false,
    // Chunks come from the LineBatcher below: each is written as soon as the previous write
    // returned. (Not 0: sonic-boom's flush would then not wait for a write under way.)
    minLength: 1,
    // A reader that stops for good must not make the service grow without bound: lines beyond this are dropped.
    maxLength: LOG_BUFFER_MAX_BYTES,
    periodicFlush: LOG_FLUSH_MS,
    // EAGAIN: stdout is a pipe whose reader is not keeping up. While running, retrying is
    // asynchronous and harmless; at exit it would block the process for as long as the reader
    // stalls (a shutdown once hung for 13 minutes that way), so it gives up after a while.
    retryEAGAIN: () => {
      if (!exiting) return true;
      exitRetryUntil ||= Date.now() + LOG_EXIT_RETRY_MS;
      return Date.now() < exitRetryUntil;
    },
  });
  // Put ahead of pino's own exit flush (which would write synchronously whatever the state of
  // stdout), and never throws: a closed stdout (EPIPE) or a stalled one must not turn a clean exit
  // into a crash or a hang.
  const batcher = new LineBatcher(destination);
  process.prependOnceListener('exit', () => {
    exiting = true;
    logSafely(() => batcher.push());
    flushDestinationSync(destination);
  });
  const logger = pino(options, batcher);
  destinations.set(logger, batcher);
  return logger;
}

/**
 * What pino writes to: its lines, gathered into chunks of LOG_CHUNK_BYTES (or what LOG_FLUSH_MS
 * gathered) for the asynchronous destination. sonic-boom's own gathering measures the whole
 * pending chunk again for each line it appends, which cost more per request than building the
 * line; here a line costs a push and an addition. Whatever writes to the destination directly
 * (a flush, the exit, printLine) pushes the gathered lines first, so the order is kept.
 */
class LineBatcher {
  private lines: string[] = [];
  private bytes = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(readonly destination: Destination) {
    this.timer = setInterval(() => logSafely(() => this.push()), LOG_FLUSH_MS);
    this.timer.unref();
    destination.on('close', () => clearInterval(this.timer));
  }

  write(line: string): boolean {
    this.lines.push(line);
    // UTF-16 units, not bytes: only decides when a chunk is big enough.
    this.bytes += line.length;
    if (this.bytes >= LOG_CHUNK_BYTES) this.push();
    return true;
  }

  /** Hands the gathered lines to the destination (which writes them at once unless a write is under way). */
  push(): void {
    if (this.lines.length === 0) return;
    const chunk = this.lines.length === 1 ? this.lines[0] : this.lines.join('');
    this.lines = [];
    this.bytes = 0;
    this.destination.write(chunk);
  }

  flush(callback?: (err?: Error) => void): void {
    this.push();
    this.destination.flush(callback);
  }

  flushSync(): void {
    this.push();
    this.destination.flushSync();
  }
}

/**
 * A pipe or socket as stdout (systemd, Docker, a parent process) is usually in blocking mode: an
 * asynchronous write to it then sits in a libuv worker thread for as long as the reader stalls,
 * and the process cannot exit until it returns (exit joins those threads). Opening it as a libuv
 * pipe switches the descriptor to non-blocking, so a stalled reader gives EAGAIN (retried later
 * without blocking anything) instead. The handle is kept (closing it would close stdout) and
 * does not keep the process alive. Files and terminals are left as they are.
 */
function makeStdoutNonBlocking(): void {
  if (stdoutOpened) return;
  try {
    const stat = fstatSync(1);
    if (!stat.isFIFO() && !stat.isSocket()) return;
    stdoutOpened = new Socket({ fd: 1, readable: false, writable: true });
    stdoutOpened.unref();
    // Errors surface through the log destination; this handle never writes.
    stdoutOpened.on('error', () => {});
  } catch {
    // No stdout, or one libuv cannot open: keep the default behaviour.
  }
}
let stdoutOpened: Socket | undefined;

type Destination = ReturnType<typeof pino.destination>;
const destinations = new WeakMap<Logger, LineBatcher>();

/**
 * The exit-time flush. When an earlier write has not returned, stdout is a pipe nobody reads (and,
 * as a child's stdout usually is, in blocking mode): a synchronous write would hang the exit for
 * as long as the reader stalls, so the remaining lines are dropped instead.
 */
function flushDestinationSync(destination: Destination): void {
  const stalled = (destination as unknown as { _writing?: boolean })._writing === true;
  try {
    if (!stalled) destination.flushSync();
  } catch {
    // EPIPE (stdout closed) or a reader that never drained: the lines cannot be delivered.
  }
  // Keeps pino's own exit flush, which runs next, from trying again.
  destination.flushSync = () => {};
}

/**
 * Writes out what the logger has buffered; resolves when written, or after `limitMs` when stdout
 * does not take it (the exit-time synchronous flush then has its own, bounded, try).
 */
export function flushLog(logger: Logger, limitMs = 1000): Promise<void> {
  const batcher = destinations.get(logger);
  if (!batcher) return Promise.resolve();
  const destination = batcher.destination;
  batcher.push();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, limitMs);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    try {
      destination.flush(done);
    } catch {
      done();
    }
  });
}

/** Logs without ever throwing: used on the way out, when stdout may already be gone. */
export function logSafely(write: () => void): void {
  try {
    write();
  } catch {
    // stdout closed under us: nothing more to say.
  }
}

/**
 * One line of plain text on the logger's output (stdout), in order with its JSON lines: written
 * through the same destination, so it cannot land in the middle of a log line. For the few lines
 * written for a person (the start-up line), not for log processors, which skip lines that are not JSON.
 */
export function printLine(logger: Logger, text: string): void {
  const batcher = destinations.get(logger);
  logSafely(() => (batcher ? batcher.write(`${text}\n`) : process.stdout.write(`${text}\n`)));
}

/** The logger of a one-off command (`netwarden scan`, `import`, `schedule`): warnings and worse, on stderr, so stdout stays the command's output. */
export function commandLogger(): Logger {
  return pino({ level: 'warn' }, pino.destination(2));
}

/** The longest the start-up's log lines are held back for the line that says where to open the service. */
const HOLD_MAX_MS = 10_000;
/** A JSON log line of level warn (40) or worse. */
const WARNING_OR_WORSE = /^\{"level":(?:[4-9]\d|\d{3,})\b/;

/** Log lines held back by holdLog: `release` writes a first line of its own, then them, in order. */
export interface HeldLog {
  release(firstLine?: string): void;
}

/**
 * Holds the logger's lines back, in memory and in order, until `release`: so that a line for a
 * person can come first, before the JSON lines of the start-up (`netwarden serve` says where to
 * open it). Nothing is kept out of sight for long: a warning or worse releases them at once (a
 * problem shows when it happens), so does a start-up longer than `maxMs`, and so does the exit.
 */
export function holdLog(logger: Logger, maxMs = HOLD_MAX_MS): HeldLog {
  const destination = destinations.get(logger);
  if (!destination) return { release: (firstLine) => firstLine !== undefined && printLine(logger, firstLine) };
  const write = destination.write.bind(destination);
  let held: string[] | null = [];
  const release = (firstLine?: string) => {
    const lines = held ?? [];
    if (held !== null) {
      held = null;
      clearTimeout(timer);
      process.off('exit', onExit);
      // Back to the destination's own write for every later line.
      destination.write = write;
    }
    logSafely(() => {
      if (firstLine !== undefined) write(`${firstLine}\n`);
      for (const line of lines) write(line);
    });
  };
  const onExit = () => release();
  destination.write = (chunk: string) => {
    if (held === null) return write(chunk);
    held.push(chunk);
    if (WARNING_OR_WORSE.test(chunk)) release();
    return true;
  };
  const timer = setTimeout(onExit, maxMs);
  timer.unref();
  // Ahead of createLogger's exit flush, which then writes them out.
  process.prependOnceListener('exit', onExit);
  return { release };
}
