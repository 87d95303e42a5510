/**
 * What the datastore commands share: loading the deployment configuration exactly as `serve`
 * does, opening the store, reporting user errors without stack traces, and reading passwords.
 */
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { ConfigError, loadServerConfig, readEnvironment, type ServerConfig } from '../config/environment.js';
import type { DatabaseHandle } from '../store/db.js';
import { isPostgresUrl } from '../util/database-url.js';
import type { CommandServices } from '../services.js';
import type { Store } from '../store/index.js';
import { markRunning } from '../store/run-markers.js';
import { NetwardenError } from '../util/errors.js';

/** Exit status for bad arguments or values (the usage was wrong). */
export const EXIT_USAGE = 2;
/** Exit status for a command that was well formed but could not be carried out. */
export const EXIT_FAILURE = 1;

/** An error meant for the operator: printed as one line, never with a stack trace. */
export class CliError extends NetwardenError {
  readonly code = 'NW_CLI';

  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
  ) {
    super(message);
  }
}

export function usageError(message: string): CliError {
  return new CliError(message, EXIT_USAGE);
}

/** The actor recorded in the audit log for everything done from the command line. */
export const CLI_ACTOR = { actor: 'cli', actorType: 'system' } as const;

/** Reads the deployment configuration (environment, config file) the same way `serve` does. */
export function loadConfig(): ServerConfig {
  try {
    return loadServerConfig();
  } catch (err) {
    if (err instanceof ConfigError) throw usageError(err.message);
    throw err;
  }
}

/** Describes where the data lives without credentials, for messages. */
/**
 * A handle on the configured database without opening the store (no migration, no seeding): for
 * commands that manage the database itself. One connection; a CliError names the database on failure.
 */
export async function openDatabaseHandle(config: ServerConfig): Promise<DatabaseHandle> {
  // Loaded here, not at the top, as in withServices.
  const { openDatabase } = await import('../store/db.js');
  try {
    return openDatabase({ url: config.databaseUrl, poolSize: 1 });
  } catch (err) {
    throw new CliError(`cannot open the database ${describeDatabase(config.databaseUrl)}: ${messageOf(err)}`);
  }
}

export function describeDatabase(url: string): string {
  if (!isPostgresUrl(url)) return url;
  try {
    const u = new URL(url);
    return `postgres://${u.host}${u.pathname}`;
  } catch {
    return 'postgres://…';
  }
}

/** Opens (and migrates) the configured datastore, runs `fn`, and always closes the store. */
export async function withStore<T>(fn: (store: Store, config: ServerConfig) => Promise<T>): Promise<T> {
  return withOpened(
    async (config) => {
      // Only the store: the scan manager and the rest of the service are for the commands that scan.
      const { openCommandStore } = await import('../store/index.js');
      const store = await openCommandStore(config.databaseUrl);
      return { store, close: () => store.close() };
    },
    (opened, config) => fn(opened.store, config),
  );
}

/**
 * Opens the command's services (services.ts: the store, migrated and seeded, and a scan manager
 * when asked for), runs `fn`, and always closes them.
 */
export async function withServices<T>(fn: (services: CommandServices, config: ServerConfig) => Promise<T>): Promise<T> {
  return withOpened(async (config) => {
    const [{ openCommandServices }, { commandLogger }] = await Promise.all([import('../services.js'), import('../logger.js')]);
    return openCommandServices(config, commandLogger());
  }, fn);
}

/**
 * What withStore and withServices share: the configuration, the store opened by `open` (loaded
 * there, not at the top: a command's start-up pays only for what it uses), the data directory's
 * in-use marker, the settings seeded, and everything closed whatever `fn` does.
 */
async function withOpened<O extends { store: Store; close(): Promise<void> }, T>(
  open: (config: ServerConfig) => Promise<O>,
  fn: (opened: O, config: ServerConfig) => Promise<T>,
): Promise<T> {
  const config = loadConfig();
  let opened: O;
  try {
    opened = await open(config);
  } catch (err) {
    throw new CliError(`cannot open the database ${describeDatabase(config.databaseUrl)}: ${messageOf(err)}`);
  }
  const release = markUsing(config);
  try {
    try {
      const { seedSettings } = await import('../config/seed.js');
      await seedSettings(opened.store, config.settingsSeed);
    } catch (err) {
      throw new CliError(messageOf(err), EXIT_USAGE);
    }
    return await fn(opened, config);
  } finally {
    release?.();
    await opened.close().catch(() => {});
  }
}

/**
 * Records this process as using the data directory, so `netwarden restore` refuses meanwhile;
 * returns how to withdraw that, or null when the marker could not be written (a read-only data
 * directory only costs that protection).
 */
export function markUsing(config: ServerConfig, command = process.argv[2] ?? 'cli'): (() => void) | null {
  try {
    return markRunning(config.dataDir, command, describeDatabase(config.databaseUrl));
  } catch {
    return null;
  }
}

export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

/**
 * Wraps a command action: a CliError (or any other error) becomes one line on stderr and an exit
 * status; the process then ends by itself once the store is closed, so output is never cut short.
 */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      if (err instanceof CliError) {
        process.stderr.write(`netwarden: ${err.message}\n`);
        process.exitCode = err.exitCode;
      } else {
        process.stderr.write(`netwarden: unexpected error: ${messageOf(err)}\n`);
        process.exitCode = EXIT_FAILURE;
      }
    }
  };
}

/** Parses a strictly positive integer argument such as a key id or a number of days. */
export function positiveInteger(value: string, what: string, max = Number.MAX_SAFE_INTEGER): number {
  const n = /^\d{1,16}$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? 'a positive whole number' : `a whole number from 1 to ${max}`;
    throw usageError(`${what} must be ${range}, not '${printable(value)}'`);
  }
  return n;
}

/** Makes a value safe to print on a terminal: control characters become `?`. */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
}

export interface PasswordOptions {
  passwordStdin?: boolean;
}

/**
 * The new password for `user create` / `user reset-password`: one line of standard input with
 * --password-stdin, else NETWARDEN_PASSWORD, else a hidden prompt (twice) when stdin is a terminal.
 */
export async function readNewPassword(options: PasswordOptions): Promise<string> {
  if (options.passwordStdin) {
    const line = await readLine(process.stdin);
    if (line === null || line === '') throw usageError('--password-stdin: no password on standard input');
    return line;
  }
  const fromEnv = readEnvironment().NETWARDEN_PASSWORD;
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  if (process.stdin.isTTY) {
    const first = await promptHidden('New password: ');
    const second = await promptHidden('Repeat the password: ');
    if (first !== second) throw usageError('the two passwords differ');
    return first;
  }
  throw usageError('no password given: use --password-stdin, set NETWARDEN_PASSWORD, or run the command in a terminal to be prompted');
}

/** The first line of a stream (without its line ending), or null at end of input with nothing read. */
function readLine(input: NodeJS.ReadableStream): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input, terminal: false, crlfDelay: Infinity });
    let done = false;
    rl.once('line', (line) => {
      done = true;
      rl.close();
      resolve(line);
    });
    rl.once('close', () => {
      if (!done) resolve(null);
    });
    input.once('error', reject);
  });
}

/** Prompts on stderr and reads a line from the terminal without echoing it. */
function promptHidden(prompt: string): Promise<string> {
  let muted = false;
  // readline echoes what is typed to its output; this output swallows it while muted.
  const output = new Writable({
    write(chunk: Buffer, encoding, callback) {
      if (!muted) process.stderr.write(chunk, encoding);
      callback();
    },
  });
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: process.stdin, output, terminal: true });
    let answered = false;
    rl.on('SIGINT', () => {
      answered = true;
      muted = false;
      process.stderr.write('\n');
      rl.close();
      reject(new CliError('cancelled', 130));
    });
    rl.on('close', () => {
      if (answered) return;
      process.stderr.write('\n');
      reject(new CliError('cancelled: no password entered'));
    });
    rl.question(prompt, (answer) => {
      answered = true;
      muted = false;
      process.stderr.write('\n');
      rl.close();
      resolve(answer);
    });
    muted = true;
  });
}

/** `2026-11-22T02:48:08.123Z` → `2026-11-22 02:48Z`: enough to tell rows apart in a table. */
export function shortTime(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}Z`;
}

/** A plain-text table: columns padded to their widest cell, two spaces apart. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}
