/**
 * A channel's config as stored and as shown (CONTRACT §9, §13): defaults filled in, checked
 * against its type's schema and the driver's own rules, secrets masked on read, and the rule
 * that binds a secret to its destination on update (the same as `updates.token` in
 * core/settings.ts): sending the mask back keeps the stored secret; changing a destination key
 * without giving the secret again in the same request clears it (reads back null).
 *
 * A URL with credentials in it (`https://user:pass@host/…`) is a secret too: it reads back as the
 * mask, and sending the mask back keeps it.
 */
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { SECRET_MASK, mergeSettings } from '../core/settings.js';
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

/** The config as clients see it: secrets set read `********`, unset ones null. */
export function maskConfig(driver: AnyDriver, config: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  for (const key of driver.secretKeys) out[key] = typeof out[key] === 'string' && out[key] !== '' ? SECRET_MASK : null;
  for (const [key, value] of Object.entries(out)) if (hasCredentials(value)) out[key] = SECRET_MASK;
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
  // A masked URL (it had credentials) sent back is the stored URL.
  for (const [key, value] of Object.entries(patch)) {
    if (value === SECRET_MASK && !driver.secretKeys.includes(key)) {
      if (!hasCredentials(current[key]))
        return { ok: false, error: `config.${key}: give the value itself; ${SECRET_MASK} only keeps a stored secret` };
      merged[key] = current[key];
    }
  }
  const moved = driver.destinationKeys.some((key) => JSON.stringify(merged[key]) !== JSON.stringify(current[key]));
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
