/**
 * Text a host sent, made safe to keep: entities decoded minimally (the XML five and numeric
 * references; no DTD, no named HTML table), control characters dropped, whitespace collapsed and
 * the length capped. What a probe stores is evidence a person reads, never markup.
 */

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** `&amp;`, `&#233;`, `&#xE9;` decoded; anything else left as written. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,6});/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : whole;
    }
    return NAMED[ref.toLowerCase()] ?? whole;
  });
}

/** Whitespace collapsed, control characters dropped, at most `max` characters; null when nothing is left. */
export function cleanText(text: string | null | undefined, max = 256): string | null {
  if (text === null || text === undefined) return null;
  const clean = text
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (!clean) return null;
  return clean.length > max ? clean.slice(0, max) : clean;
}
