/**
 * Which email addresses a channel accepts for `from` and `to`: `user@example.com` or
 * `Display Name <user@example.com>`. Deliberately narrower than RFC 5322 (no comments, no quoted
 * local parts, no groups): what a person types into a settings form, checked so that a typo is a
 * 400 when the channel is saved rather than a failed delivery at 3 a.m.
 */

/** RFC 5321's limit on a path (the address between the angle brackets). */
const MAX_ADDRESS_LENGTH = 254;

/** Dot-atom local part: letters, digits and the specials RFC 5322 allows in an atom. */
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
/** A host name (one label allowed: `root@localhost` on a LAN), internationalized letters included. */
const DOMAIN = /^(?!-)[\p{L}\p{N}-]{1,63}(?<!-)(?:\.(?!-)[\p{L}\p{N}-]{1,63}(?<!-))*$/u;
/** An address literal such as `[192.168.1.10]`. */
const IPV4_LITERAL = /^\[(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\]$/;

/**
 * The bare address of `text`, or a reason it is not one (`"must be an email address such as …"`).
 */
export function parseEmailAddress(text: string): { ok: true; address: string } | { ok: false; error: string } {
  const invalid = { ok: false as const, error: 'must be an email address such as alerts@example.com or "Netwarden <alerts@example.com>"' };
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(text)) return { ok: false, error: 'must not contain control characters (line breaks, NUL)' };
  const trimmed = text.trim();
  let address = trimmed;
  const named = /^([^<>]*)<([^<>]*)>$/.exec(trimmed);
  if (named) {
    const name = named[1].trim();
    // A display name with quotes must be fully quoted, without inner quotes: keeps parsing simple.
    if (name.includes('"') && !/^"[^"\\]*"$/.test(name)) return invalid;
    address = named[2].trim();
  }
  if (address.length === 0 || address.length > MAX_ADDRESS_LENGTH) return invalid;
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return invalid;
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  if (local.length > 64 || !LOCAL_PART.test(local)) return invalid;
  if (!DOMAIN.test(domain) && !IPV4_LITERAL.test(domain)) return invalid;
  return { ok: true, address };
}
