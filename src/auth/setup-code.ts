/**
 * The one-time set-up code: while no user exists, whoever reaches the service first could claim
 * it as administrator. So `POST /api/auth/setup` from another machine needs a code the service
 * prints on its console and in its log at start-up: only someone who can read those (the person
 * installing it) can set it up over the network. A request from this machine itself (a loopback
 * peer, with no proxy header saying it was forwarded from elsewhere) needs none, and none is
 * needed when the administrator comes from NETWARDEN_ADMIN_USERNAME/PASSWORD.
 *
 * The code lives in this process only: each instance prints its own and accepts its own. It is
 * void once set-up is complete (the endpoint answers 409 from then on).
 */
import { randomInt, timingSafeEqual, createHash } from 'node:crypto';
import { isIP } from 'node:net';

/** Letters and digits that cannot be mistaken for one another (no 0/O, 1/I/L). */
const ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

/** Three groups of four: about 59 bits, far beyond guessing while the endpoint is open. */
export function newSetupCode(): string {
  const groups: string[] = [];
  for (let g = 0; g < 3; g++) {
    let group = '';
    for (let i = 0; i < 4; i++) group += ALPHABET[randomInt(ALPHABET.length)];
    groups.push(group);
  }
  return groups.join('-');
}

/** Headers a reverse proxy adds: a request carrying one came from elsewhere, whatever its socket says. */
const FORWARDING_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip', 'x-forwarded-host', 'x-client-ip'];

/** Whether a request comes from this machine: the socket peer is loopback and nothing says it was forwarded. */
export function isLocalRequest(peer: string | undefined, headers: Record<string, unknown>): boolean {
  if (!peer) return false;
  const bare = peer.replace(/^::ffff:/i, '');
  const loopback = (isIP(bare) === 4 && bare.startsWith('127.')) || bare === '::1';
  return loopback && !FORWARDING_HEADERS.some((h) => headers[h] !== undefined);
}

const canonical = (code: string) => code.toUpperCase().replace(/[^A-Z0-9]/g, '');
const digest = (code: string) => createHash('sha256').update(canonical(code)).digest();

export class SetupCode {
  /** The code, or null when none is needed (the administrator comes from the environment). */
  readonly code: string | null;

  constructor(code: string | null = newSetupCode()) {
    this.code = code;
  }

  /** Whether a set-up request from `peer` must carry the code. */
  required(peer: string | undefined, headers: Record<string, unknown>): boolean {
    return this.code !== null && !isLocalRequest(peer, headers);
  }

  /** Whether `given` is the code (case, spaces and dashes ignored; compared in constant time). */
  matches(given: string | undefined): boolean {
    if (this.code === null) return true;
    if (typeof given !== 'string') return false;
    return timingSafeEqual(digest(given), digest(this.code));
  }
}
