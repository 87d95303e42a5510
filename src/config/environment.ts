/**
 * Deployment settings: where to listen, where the data lives, which database. They come from
 * environment variables, then an optional JSON config file, then defaults. The file's `settings`
 * section (and a few variables) seed the stored configuration on first start only.
 *
 * This module is the one place that reads the process environment (test/architecture.test.ts
 * holds every other file to that): `ENVIRONMENT` describes each variable, its default and what it
 * means, docs/configuration.md's table is generated from it (scripts/generate-env-table.mjs), and
 * the values reach the rest of the code as arguments.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Type, type Static, type StringOptions } from '@sinclair/typebox';
import { parseCidrList } from '../core/net.js';
import { isPostgresUrl } from '../util/database-url.js';
import { outboundAllowFromEnvironment } from '../util/outbound.js';
import { NetwardenError } from '../util/errors.js';

/** A variable of ENVIRONMENT: a string, with what the docs say about it. */
interface VariableOptions extends StringOptions {
  description: string;
  /** The config file key that gives the same setting, when there is one. */
  fileKey?: string;
  /** The default as the docs state it, when it is not a plain value (`default`). */
  defaultText?: string;
}
const variable = (options: VariableOptions) => Type.Optional(Type.String(options));

/**
 * Every environment variable Netwarden reads, with its default and what it means. The deployment
 * settings (those with a config file key) take the first present of the variable, the file's key
 * and the default.
 */
export const ENVIRONMENT = Type.Object({
  NETWARDEN_PORT: variable({
    fileKey: 'port',
    default: '8080',
    description: 'TCP port, 0–65535 (`0`: any free port; the log line `netwarden listening` shows which). `serve --port` overrides it.',
  }),
  NETWARDEN_HOST: variable({
    fileKey: 'host',
    default: '0.0.0.0',
    description: 'Listen address. `127.0.0.1` keeps the service on the local machine; `::` listens on IPv6 too. `serve --host` overrides it.',
  }),
  NETWARDEN_DATA_DIR: variable({
    fileKey: 'data_dir',
    default: 'data',
    defaultText: '`./data`',
    description: 'Directory of the SQLite database, created when missing.',
  }),
  NETWARDEN_DATABASE_URL: variable({
    fileKey: 'database_url',
    defaultText: '`<data dir>/netwarden.db`',
    description:
      '`postgres://` or `postgresql://` URL for PostgreSQL; anything else is a SQLite file path (a leading `sqlite:` or `sqlite://` is ignored).',
  }),
  NETWARDEN_LOG_LEVEL: variable({
    fileKey: 'log_level',
    default: 'info',
    description: '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`. `netwarden agent` reads it too.',
  }),
  NETWARDEN_CONFIG: variable({
    defaultText: '`<data dir>/netwarden.json` if it exists',
    description: 'Path of the config file.',
  }),
  NETWARDEN_ADMIN_USERNAME: variable({
    description:
      'Set with `NETWARDEN_ADMIN_PASSWORD` (one without the other is an error): when the database has no user at start-up, this administrator is created (audit action `setup_completed`). Ignored once any user exists. The username is 3–64 of `A-Z a-z 0-9 . _ -`.',
  }),
  NETWARDEN_ADMIN_PASSWORD: variable({
    description: 'The password of `NETWARDEN_ADMIN_USERNAME`: at least 10 characters and not the username.',
  }),
  NETWARDEN_SUBNET: variable({
    description: 'Initial `network.subnet` (overrides `settings.network.subnet` from the file).',
  }),
  NETWARDEN_UPDATE_FEED_URL: variable({
    description: "Initial `updates.feed_url` (overrides the file's).",
  }),
  NETWARDEN_NMAP_PATH: variable({
    default: 'nmap',
    description: 'The `nmap` executable, looked up on the `PATH` when it names no directory.',
  }),
  NETWARDEN_SCAN_ALLOW: variable({
    description:
      'Comma-separated IPv4 CIDR blocks scans may target, replacing `scanning.allowed_targets` for this process; the API cannot change it. A malformed value stops the start with an error naming the variable.',
  }),
  NETWARDEN_OUTBOUND_ALLOW: variable({
    description:
      'Comma-separated IPv4 or IPv6 CIDRs (e.g. `127.0.0.0/8`) that notification deliveries, name sources and the update check may reach although they are loopback, link-local or unspecified addresses, which are refused otherwise ([security.md](security.md#outbound-requests)). Unset: none. The API cannot change it; a malformed value stops the start with an error naming the variable.',
  }),
  NETWARDEN_PASSWORD: variable({
    description: 'Read only by `netwarden user create` and `user reset-password` when `--password-stdin` is not given.',
  }),
  NETWARDEN_API_KEY: variable({
    description: 'The API key `netwarden watch` authenticates with when `--api-key` is not given.',
  }),
  NETWARDEN_AGENT_TOKEN: variable({
    description: 'The agent token `netwarden agent` uses when `--token` is not given (it then does not show in the process list).',
  }),
  NMAPDIR: variable({
    description:
      "nmap's own variable: where its data files are. Netwarden reads `nmap-services` (the ranking of frequent ports) there first, then beside the binary `NETWARDEN_NMAP_PATH` names, then in the usual install locations.",
  }),
});
export type Environment = Static<typeof ENVIRONMENT>;
export type VariableName = keyof Environment;

/** The variables of ENVIRONMENT set in `env` (the process's by default); every other variable is left out. */
export function readEnvironment(env: NodeJS.ProcessEnv = process.env): Environment {
  const out: Record<string, string> = {};
  for (const name of Object.keys(ENVIRONMENT.properties)) {
    const value = env[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** A variable's default from ENVIRONMENT (undefined when it has none that is a plain value). */
export function defaultOf(name: VariableName): string | undefined {
  return (ENVIRONMENT.properties[name] as unknown as VariableOptions).default as string | undefined;
}

/** docs/configuration.md's table of the variables, generated from ENVIRONMENT. */
export function environmentTable(): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  const rows = Object.entries(ENVIRONMENT.properties).map(([name, schema]) => {
    const options = schema as unknown as VariableOptions;
    const fallback = options.defaultText ?? (options.default !== undefined ? `\`${String(options.default)}\`` : '—');
    return `| \`${name}\` | ${options.fileKey ? `\`${options.fileKey}\`` : '—'} | ${cell(fallback)} | ${cell(options.description)} |`;
  });
  return ['| Variable | Config file key | Default | Meaning |', '|---|---|---|---|', ...rows].join('\n') + '\n';
}

export interface ServerConfig {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string;
  logLevel: string;
  /** Path of the config file that was read, if any. */
  configFile: string | null;
  /** Seed for the stored configuration (first start only). */
  settingsSeed: Record<string, unknown>;
  admin: { username: string; password: string } | null;
  /** NETWARDEN_SCAN_ALLOW: scan targets that replace scanning.allowed_targets, or null. */
  scanAllow: string[] | null;
  /** NETWARDEN_OUTBOUND_ALLOW: loopback/link-local ranges outbound requests may reach, or null. */
  outboundAllow: string[] | null;
  /** Where nmap and its data files are. */
  nmap: NmapLocation;
}

/** NETWARDEN_NMAP_PATH and NMAPDIR: the nmap executable, and the folder of its data files when set. */
export interface NmapLocation {
  binary: string;
  dataDir: string | null;
}

export class ConfigError extends NetwardenError {
  readonly code = 'NW_CONFIG';
}

const FILE_KEYS = ['port', 'host', 'data_dir', 'database_url', 'log_level', 'settings'];
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadServerConfig(environment: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): ServerConfig {
  const env = readEnvironment(environment);
  const dataDirFromEnv = env.NETWARDEN_DATA_DIR;
  const explicitFile = env.NETWARDEN_CONFIG;
  const defaultFile = join(resolve(cwd, dataDirFromEnv ?? defaultOf('NETWARDEN_DATA_DIR')!), 'netwarden.json');
  const file = explicitFile ? resolve(cwd, explicitFile) : existsSync(defaultFile) ? defaultFile : null;
  const fromFile = file ? readConfigFile(file) : {};

  const dataDir = resolve(cwd, dataDirFromEnv ?? str(fromFile.data_dir, 'data_dir') ?? defaultOf('NETWARDEN_DATA_DIR')!);
  const port = parsePort(env.NETWARDEN_PORT ?? fromFile.port ?? defaultOf('NETWARDEN_PORT'));
  const host = env.NETWARDEN_HOST ?? str(fromFile.host, 'host') ?? defaultOf('NETWARDEN_HOST')!;
  const rawDb = env.NETWARDEN_DATABASE_URL ?? str(fromFile.database_url, 'database_url');
  if (rawDb && isPostgresUrl(rawDb)) {
    checkPostgresUrl(rawDb, env.NETWARDEN_DATABASE_URL !== undefined ? 'NETWARDEN_DATABASE_URL' : `config file ${file}: "database_url"`);
  }
  const databaseUrl = !rawDb ? join(dataDir, 'netwarden.db') : isPostgresUrl(rawDb) ? rawDb : resolve(cwd, rawDb.replace(/^sqlite:(\/\/)?/, ''));
  const logLevel = env.NETWARDEN_LOG_LEVEL ?? str(fromFile.log_level, 'log_level') ?? defaultOf('NETWARDEN_LOG_LEVEL')!;
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`log level '${logLevel}' is not one of ${LOG_LEVELS.join(', ')}`);

  const seed = (fromFile.settings ?? {}) as Record<string, Record<string, unknown>>;
  if (typeof seed !== 'object' || Array.isArray(seed)) throw new ConfigError(`${file}: "settings" must be an object`);
  if (env.NETWARDEN_SUBNET) seed.network = { ...(seed.network ?? {}), subnet: env.NETWARDEN_SUBNET };
  if (env.NETWARDEN_UPDATE_FEED_URL) seed.updates = { ...(seed.updates ?? {}), feed_url: env.NETWARDEN_UPDATE_FEED_URL };

  const username = env.NETWARDEN_ADMIN_USERNAME;
  const password = env.NETWARDEN_ADMIN_PASSWORD;
  if (Boolean(username) !== Boolean(password)) {
    throw new ConfigError('NETWARDEN_ADMIN_USERNAME and NETWARDEN_ADMIN_PASSWORD must be set together');
  }
  return {
    port,
    host,
    dataDir,
    databaseUrl,
    logLevel,
    configFile: file,
    settingsSeed: seed,
    admin: username && password ? { username, password } : null,
    scanAllow: scanAllowFromEnvironment(env),
    outboundAllow: outboundAllowChecked(env),
    nmap: nmapLocation(env),
  };
}

/** NETWARDEN_SCAN_ALLOW as canonical CIDRs, null when unset; a malformed value is a ConfigError naming it. */
export function scanAllowFromEnvironment(env: Environment = readEnvironment()): string[] | null {
  const text = env.NETWARDEN_SCAN_ALLOW;
  if (text === undefined || text.trim() === '') return null;
  const parsed = parseCidrList(text);
  if (!parsed.ok) throw new ConfigError(`NETWARDEN_SCAN_ALLOW: ${parsed.error}`);
  return parsed.value;
}

/** NETWARDEN_OUTBOUND_ALLOW as CIDRs, null when unset; a malformed value is a ConfigError naming it. */
export function outboundAllowChecked(env: Environment = readEnvironment()): string[] | null {
  try {
    return outboundAllowFromEnvironment(env);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

/** Where nmap is (NETWARDEN_NMAP_PATH, default `nmap` on the PATH) and its data files (NMAPDIR). */
export function nmapLocation(env: Environment = readEnvironment()): NmapLocation {
  return { binary: env.NETWARDEN_NMAP_PATH || defaultOf('NETWARDEN_NMAP_PATH')!, dataDir: env.NMAPDIR || null };
}

function readConfigFile(file: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`cannot read config file ${file}: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${file} must hold a JSON object`);
  }
  const unknown = Object.keys(parsed).filter((k) => !FILE_KEYS.includes(k));
  if (unknown.length) throw new ConfigError(`config file ${file}: unknown key(s) ${unknown.join(', ')}; known: ${FILE_KEYS.join(', ')}`);
  return parsed as Record<string, unknown>;
}

/**
 * A PostgreSQL URL must parse before the store opens it: otherwise the failure is a bare
 * "Invalid URL" deep in the driver that names neither the setting nor the fix. The value itself
 * is not repeated: it holds the password.
 */
function checkPostgresUrl(url: string, source: string): void {
  const problem = postgresUrlProblem(url);
  if (problem) {
    throw new ConfigError(
      `${source} is not a valid PostgreSQL URL (${problem}): expected postgres://user:password@host:port/database, ` +
        'with special characters in the user name or password percent-encoded (a space as %20, @ as %40, / as %2F)',
    );
  }
}

function postgresUrlProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    const reasons = ['it does not parse as a URL'];
    if (/\s/.test(url)) reasons.push('it contains a space');
    const port = portOf(url);
    if (port !== undefined && !/^\d*$/.test(port)) reasons.push(`the port '${port}' is not a number`);
    return reasons.join('; ');
  }
  try {
    decodeURIComponent(parsed.username);
    decodeURIComponent(parsed.password);
    decodeURIComponent(parsed.pathname);
  } catch {
    return 'malformed percent-encoding';
  }
  return null;
}

/** The port as written in a URL that may not parse (a hint only). It is not secret; the user name and password before the @ are. */
function portOf(url: string): string | undefined {
  const afterScheme = url.replace(/^[a-z]+:\/\//i, '');
  const hostAndPort = afterScheme.slice(afterScheme.lastIndexOf('@') + 1).split(/[/?#]/)[0];
  const afterHost = hostAndPort.startsWith('[') ? hostAndPort.slice(hostAndPort.indexOf(']') + 1) : hostAndPort;
  const colon = afterHost.indexOf(':');
  return colon === -1 ? undefined : afterHost.slice(colon + 1);
}

function parsePort(value: unknown): number {
  const n = typeof value === 'number' ? value : /^\d+$/.test(String(value)) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new ConfigError(`port '${String(value)}' must be an integer 0-65535`);
  return n;
}

function str(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new ConfigError(`config file: "${name}" must be a string`);
  return value;
}
