/**
 * Deployment settings: where to listen, where the data lives, which database. They come from
 * environment variables, then an optional JSON config file, then defaults. The file's `settings`
 * section (and a few variables) seed the stored configuration on first start only.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseCidrList } from '../core/net.js';
import { isPostgresUrl } from '../store/db.js';
import { outboundAllowFromEnvironment } from '../util/outbound.js';

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
}

export class ConfigError extends Error {}

const FILE_KEYS = ['port', 'host', 'data_dir', 'database_url', 'log_level', 'settings'];
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadServerConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): ServerConfig {
  const dataDirFromEnv = env.NETWARDEN_DATA_DIR;
  const explicitFile = env.NETWARDEN_CONFIG;
  const defaultFile = join(resolve(cwd, dataDirFromEnv ?? 'data'), 'netwarden.json');
  const file = explicitFile ? resolve(cwd, explicitFile) : existsSync(defaultFile) ? defaultFile : null;
  const fromFile = file ? readConfigFile(file) : {};

  const dataDir = resolve(cwd, dataDirFromEnv ?? str(fromFile.data_dir, 'data_dir') ?? 'data');
  const port = parsePort(env.NETWARDEN_PORT ?? fromFile.port ?? 8080);
  const host = env.NETWARDEN_HOST ?? str(fromFile.host, 'host') ?? '0.0.0.0';
  const rawDb = env.NETWARDEN_DATABASE_URL ?? str(fromFile.database_url, 'database_url');
  if (rawDb && isPostgresUrl(rawDb)) {
    checkPostgresUrl(rawDb, env.NETWARDEN_DATABASE_URL !== undefined ? 'NETWARDEN_DATABASE_URL' : `config file ${file}: "database_url"`);
  }
  const databaseUrl = !rawDb ? join(dataDir, 'netwarden.db') : isPostgresUrl(rawDb) ? rawDb : resolve(cwd, rawDb.replace(/^sqlite:(\/\/)?/, ''));
  const logLevel = env.NETWARDEN_LOG_LEVEL ?? str(fromFile.log_level, 'log_level') ?? 'info';
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
  };
}

/** NETWARDEN_SCAN_ALLOW as canonical CIDRs, null when unset; a malformed value is a ConfigError naming it. */
export function scanAllowFromEnvironment(env: NodeJS.ProcessEnv): string[] | null {
  const text = env.NETWARDEN_SCAN_ALLOW;
  if (text === undefined || text.trim() === '') return null;
  const parsed = parseCidrList(text);
  if (!parsed.ok) throw new ConfigError(`NETWARDEN_SCAN_ALLOW: ${parsed.error}`);
  return parsed.value;
}

/** NETWARDEN_OUTBOUND_ALLOW as CIDRs, null when unset; a malformed value is a ConfigError naming it. */
function outboundAllowChecked(env: NodeJS.ProcessEnv): string[] | null {
  try {
    return outboundAllowFromEnvironment(env);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
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
