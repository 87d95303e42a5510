import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

export const API_KEY_PREFIX = 'svc_';
/** Characters of the key stored in clear for lookup and display: `svc_` plus 8. */
export const API_KEY_LOOKUP_LENGTH = 12;
/** `svc_` + 43 characters of URL-safe base64 (32 random bytes) = 47 characters. */
const API_KEY_PATTERN = /^svc_[A-Za-z0-9_-]{43,45}$/;

/** SHA-256 as hex, one shot: no Hash object (a third of createHash's cost, paid by every authenticated request). */
export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex');
}

export interface NewApiKey {
  key: string;
  prefix: string;
  hash: string;
}

export function generateApiKey(): NewApiKey {
  return generateToken(API_KEY_PREFIX);
}

/** Agent tokens (CONTRACT §12): `nwa_` and 32 random bytes, stored as their SHA-256 like API keys. */
export const AGENT_TOKEN_PREFIX = 'nwa_';
const AGENT_TOKEN_PATTERN = /^nwa_[A-Za-z0-9_-]{43,45}$/;

export function generateAgentToken(): NewApiKey {
  return generateToken(AGENT_TOKEN_PREFIX);
}

/** Cheap syntactic check done before any database lookup. */
export function looksLikeAgentToken(value: string): boolean {
  return AGENT_TOKEN_PATTERN.test(value);
}

function generateToken(prefix: string): NewApiKey {
  const key = prefix + randomBytes(32).toString('base64url');
  return { key, prefix: key.slice(0, API_KEY_LOOKUP_LENGTH), hash: sha256Hex(key) };
}

/** Cheap syntactic check done before any database lookup. */
export function looksLikeApiKey(value: string): boolean {
  return API_KEY_PATTERN.test(value);
}

export function apiKeyLookupPrefix(key: string): string {
  return key.slice(0, API_KEY_LOOKUP_LENGTH);
}

/** Constant-time comparison of two hex digests of equal length. */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** A session token for the cookie; only its SHA-256 is stored. */
export function generateSessionToken(): { token: string; id: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, id: sha256Hex(token) };
}
