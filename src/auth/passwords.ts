import { hash, verify } from '@node-rs/argon2';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, USERNAME_MAX_LENGTH, USERNAME_MIN_LENGTH, USERNAME_PATTERN } from '../core/limits.js';

/** Algorithm.Argon2id in @node-rs/argon2 (a const enum, which isolated modules cannot import). */
const ARGON2ID = 2;

// OWASP's argon2id baseline: 19 MiB, 2 iterations, 1 lane.
const OPTIONS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

/** A hash of a random password, verified against when the user is unknown so timing does not tell. */
let dummyHash: Promise<string> | undefined;

export async function verifyPassword(storedHash: string | undefined, password: string): Promise<boolean> {
  if (storedHash === undefined) {
    dummyHash ??= hashPassword(`unknown-user-${Math.random()}`);
    await verify(await dummyHash, password).catch(() => false);
    return false;
  }
  try {
    return await verify(storedHash, password);
  } catch {
    return false;
  }
}

/** Returns a message saying what is wrong with a new password, or null when acceptable. */
export function passwordProblem(password: string, username?: string): string | null {
  if (password.length < PASSWORD_MIN_LENGTH) return `must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (password.length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters`;
  if (username && password.toLowerCase() === username.toLowerCase()) return 'must not be the username';
  return null;
}

export function usernameProblem(username: string): string | null {
  return new RegExp(USERNAME_PATTERN).test(username)
    ? null
    : `must be ${USERNAME_MIN_LENGTH}-${USERNAME_MAX_LENGTH} characters of A-Z, a-z, 0-9, dot, underscore or hyphen`;
}
