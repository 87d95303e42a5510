/**
 * A channel's config as stored and as shown (CONTRACT §9, §13): defaults filled in, checked
 * against its type's schema and the driver's own rules, secrets masked on read, and the rule
 * that binds a secret to its destination on update (the same as `updates.token` in
 * core/settings.ts): sending the mask back keeps the stored secret; changing a destination key
 * without giving the secret again in the same request clears it (reads back null).
 *
 * Some URLs are secrets themselves: a Slack or Discord incoming-webhook URL (whoever has it can
 * post), an ntfy URL with an `?auth=` token (the driver's `secretUrl`). They read back as the
 * mask, and sending the mask back keeps them. A URL with credentials in it
 * (`https://user:pass@host/…`) is refused: they go in the type's own secret fields. (One stored
 * before that rule reads back masked too.)
 */
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { SECRET_MASK } from '../core/limits.js';
import { mergeSettings } from '../core/settings.js';
import { isObject } from '../util/is-object.js';
import type { ChannelDriver } from './types.js';

export type ConfigResult = { ok: true; config: Record<string, unknown> } | { ok: false; error: string };

type AnyDriver = ChannelDriver<object>;

/** Whether a value is a URL carrying a user name or password. */
export function hasCredentials(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.username !== '' || url.password !== '';
  } catch {
    return false;
  }
}

/** Whether a config value is a URL that is itself a secret (credentials in it, or the driver says so). */
export function isSecretUrl(driver: AnyDriver, key: string, value: unknown): boolean {
  return typeof value === 'string' && value !== '' && (hasCredentials(value) || (driver.secretUrl?.(key, value) ?? false));
}

/**
 * Every secret value of a config, for scrubbing text that may echo them: the secret keys' values,
 * secret URLs whole, and their parts (a password, a user name, an `auth` parameter, the path of a
 * Slack or Discord webhook URL).
 */
export function secretsOf(driver: AnyDriver, config: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const key of driver.secretKeys) if (typeof config[key] === 'string' && config[key] !== '') out.push(config[key]);
  for (const [key, value] of Object.entries(config)) {
    if (!isSecretUrl(driver, key, value)) continue;
    const url = new URL(value as string);
    out.push(value as string, url.pathname, url.search.slice(1));
    if (url.password) out.push(decodeURIComponent(url.password));
    if (url.username) out.push(decodeURIComponent(url.username));
    for (const [, param] of url.searchParams) out.push(param);
  }
  // Longest first, so a whole URL is replaced before its parts.
  return [...new Set(out.filter((s) => s.length > 1))].sort((a, b) => b.length - a.length);
}

/** The config as clients see it: secrets set read `********`, unset ones null. */
export function maskConfig(driver: AnyDriver, config: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  for (const key of driver.secretKeys) out[key] = typeof out[key] === 'string' && out[key] !== '' ? SECRET_MASK : null;
  for (const [key, value] of Object.entries(out)) if (isSecretUrl(driver, key, value)) out[key] = SECRET_MASK;
  return out;
}

/** Checks a complete config and fills its defaults; unset secrets become null. */
export function normalizeConfig(driver: AnyDriver, candidate: unknown): ConfigResult {
  if (!isObject(candidate)) return { ok: false, error: 'config: must be a JSON object' };
  const config: Record<string, unknown> = structuredClone(candidate);
  for (const key of driver.secretKeys) {
    if (config[key] === '') config[key] = null;
  }
  // Optional keys that may be null read back as null when unset, so every key of the type shows.
  for (const [key, schema] of Object.entries(driver.configSchema.properties as Record<string, TSchema>)) {
    if (config[key] === undefined && (schema.anyOf as TSchema[] | undefined)?.some((s) => s.type === 'null')) config[key] = null;
  }
  const filled = Value.Default(driver.configSchema, config) as Record<string, unknown>;
  const first = Value.Errors(driver.configSchema, filled).First();
  if (first) return { ok: false, error: `${configPath(first.path)}: ${describe(first.schema, first.message, first.value)}` };
  const problem = driver.check(filled);
  if (problem) return { ok: false, error: problem };
  for (const [key, value] of Object.entries(filled)) {
    if (hasCredentials(value)) {
      return {
        ok: false,
        error: `config.${key}: must not carry a user name or password (https://user:pass@…); give the secret in the channel's own fields`,
      };
    }
  }
  return { ok: true, config: filled };
}

/** The config of a new channel: the mask stands for nothing here, so it is refused. */
export function createConfig(driver: AnyDriver, given: unknown): ConfigResult {
  if (isObject(given)) {
    for (const [key, value] of Object.entries(given)) {
      if (value === SECRET_MASK)
        return { ok: false, error: `config.${key}: give the value itself; ${SECRET_MASK} only keeps a value already stored` };
    }
  }
  return normalizeConfig(driver, given);
}

/**
 * Applies a partial config (deep-merged: objects key by key, arrays and values replace, null
 * resets a key to its default) to the stored one, with the secret rules above.
 */
export function updateConfig(driver: AnyDriver, current: Record<string, unknown>, patch: unknown): ConfigResult {
  if (!isObject(patch)) return { ok: false, error: 'config: must be a JSON object' };
  const defaults = Value.Default(driver.configSchema, {}) as Record<string, unknown>;
  const merged = mergeSettings(current, patch, defaults) as Record<string, unknown>;
  // A masked URL (a secret itself) sent back is the stored URL.
  for (const [key, value] of Object.entries(patch)) {
    if (value === SECRET_MASK && !driver.secretKeys.includes(key)) {
      if (!isSecretUrl(driver, key, current[key]))
        return { ok: false, error: `config.${key}: give the value itself; ${SECRET_MASK} only keeps a stored secret` };
      merged[key] = current[key];
    }
  }
  // Turning TLS off counts as a new destination: the secret would travel where it was not saved to go.
  const moved =
    driver.destinationKeys.some((key) => JSON.stringify(merged[key]) !== JSON.stringify(current[key])) ||
    (driver.tlsKeys ?? []).some((key) => current[key] === true && merged[key] !== true);
  for (const key of driver.secretKeys) {
    const given = patch[key];
    const givenAgain = given !== undefined && given !== SECRET_MASK;
    if (moved && !givenAgain) merged[key] = null;
    else if (merged[key] === SECRET_MASK) merged[key] = current[key] ?? null;
  }
  return normalizeConfig(driver, merged);
}

function configPath(pointer: string): string {
  const path = pointer.replace(/^\//, '').split('/').join('.');
  return path === '' ? 'config' : `config.${path}`;
}

function describe(schema: TSchema, message: string, value: unknown): string {
  if (value === undefined) return 'is required';
  if (message.startsWith('Unexpected property')) return 'unknown field';
  const s = schema as {
    type?: string;
    minimum?: number;
    maximum?: number;
    anyOf?: TSchema[];
    enum?: unknown[];
    minLength?: number;
    maxLength?: number;
  };
  if (s.enum) return `must be one of ${s.enum.join(', ')}`;
  if (s.anyOf?.every((x) => 'const' in x)) return `must be one of ${s.anyOf.map((x) => String(x.const)).join(', ')}`;
  if ((s.type === 'integer' || s.type === 'number') && s.minimum !== undefined && s.maximum !== undefined) {
    return `must be ${s.type === 'integer' ? 'a whole number' : 'a number'} from ${s.minimum} to ${s.maximum}`;
  }
  if (s.anyOf?.some((x) => x.type === 'null')) {
    const other = s.anyOf.find((x) => x.type !== 'null');
    const what = other?.type === 'integer' ? 'a whole number' : other?.type === 'array' ? 'an array' : `a ${other?.type ?? 'value'}`;
    const range = other?.minimum !== undefined && other?.maximum !== undefined ? ` from ${other.minimum} to ${other.maximum}` : '';
    return `must be ${what}${range} or null`;
  }
  if (s.type === 'string' && typeof value === 'string') {
    if (s.minLength !== undefined && value.length < s.minLength)
      return s.minLength === 1 ? 'must not be empty' : `must be at least ${s.minLength} characters`;
    if (s.maxLength !== undefined && value.length > s.maxLength) return `must be at most ${s.maxLength} characters`;
  }
  if (s.type && typeof value !== s.type && !(s.type === 'integer' && typeof value === 'number')) {
    return `must be ${/^[aeiou]/.test(s.type) ? 'an' : 'a'} ${s.type === 'integer' ? 'whole number' : s.type}`;
  }
  return message.charAt(0).toLowerCase() + message.slice(1);
}
