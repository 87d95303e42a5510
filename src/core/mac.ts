/** MAC address helpers. Pure. */

const MAC = /^([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})$/i;

/** `aa-bb-cc-dd-ee-ff`, `aabb.ccdd.eeff`-less forms → `AA:BB:CC:DD:EE:FF`; null when not a MAC. */
export function normalizeMac(text: string | null | undefined): string | null {
  if (!text) return null;
  const m = text.trim().match(MAC);
  if (!m) return null;
  const mac = m.slice(1).join(':').toUpperCase();
  return mac === '00:00:00:00:00:00' || mac === 'FF:FF:FF:FF:FF:FF' ? null : mac;
}

/**
 * True for a locally administered address (second-lowest bit of the first octet set): phones and
 * laptops randomise their Wi-Fi MAC this way, so such a MAC may change and is a weaker identity.
 */
export function isLocallyAdministered(mac: string): boolean {
  return (Number.parseInt(mac.slice(0, 2), 16) & 0b10) !== 0;
}

/** The 24-bit OUI of a normalised MAC as six hex digits, the key of IEEE's registry. */
export function ouiOf(mac: string): string {
  return mac.replace(/:/g, '').slice(0, 6).toUpperCase();
}
