/**
 * The fingerprint patterns' literal pre-filters (src/core/fingerprint-literals.ts): what each reads
 * from a pattern's source, and that none ever holds back a value its pattern matches (the table's
 * own patterns over every rule example and over generated values, fast-check).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { literalFilterOf, mayMatch } from '../../src/core/fingerprint-literals.js';
import { FINGERPRINT_RULES, type FingerprintExample } from '../../src/core/fingerprints.js';

const passes = (pattern: RegExp, value: string): boolean => {
  const filter = literalFilterOf(pattern);
  return filter === null || mayMatch(filter, filter.lowerCase ? value.toLowerCase() : value);
};

describe('literal pre-filters', () => {
  it('reads the literal each alternative needs, anchored ones at the start, in lower case when case is ignored', () => {
    expect(literalFilterOf(/^Synology\b/i)).toEqual({ lowerCase: true, literals: [{ text: 'synology', start: true }] });
    expect(literalFilterOf(/Synology|DiskStation|RackStation|^DSM\b/i)?.literals).toEqual([
      { text: 'synology', start: false },
      { text: 'diskstation', start: false },
      { text: 'rackstation', start: false },
      { text: 'dsm', start: true },
    ]);
    // Escaped punctuation is literal; the longest run wins where nothing is anchored.
    expect(literalFilterOf(/\bMiniUPnPd\/(?<version>[\d.]+)/i)?.literals).toEqual([{ text: 'miniupnpd/', start: false }]);
    expect(literalFilterOf(/^1\.3\.6\.1\.4\.1\.8072\.3\.2\.10$/)).toEqual({
      lowerCase: false,
      literals: [{ text: '1.3.6.1.4.1.8072.3.2.10', start: true }],
    });
    // An optional character ends the run before it; a repeated one ends it after itself.
    expect(literalFilterOf(/^ab?cdef/)?.literals).toEqual([{ text: 'cdef', start: false }]);
    expect(literalFilterOf(/xyz+abc/)?.literals).toEqual([{ text: 'xyz', start: false }]);
    expect(literalFilterOf(/^a{0,2}bcd/)?.literals).toEqual([{ text: 'bcd', start: false }]);
    expect(literalFilterOf(/^Cisco IOS(?: XE)? Software\b/)?.literals).toEqual([{ text: 'Cisco IOS', start: true }]);
  });

  it('gives no filter where an alternative promises no literal, or the source is not read for sure', () => {
    expect(literalFilterOf(/^(?<model>(?:DS|RS)\d[\w+-]*)/)).toBeNull();
    expect(literalFilterOf(/synology|\d+/i)).toBeNull();
    expect(literalFilterOf(/ab/)).toBeNull();
    expect(literalFilterOf(/\x41BCD/)).toBeNull();
    expect(literalFilterOf(/abc{x}/)).toBeNull();
    expect(literalFilterOf(/synology/g)).toBeNull();
    expect(literalFilterOf(/synology/m)).toBeNull();
    expect(literalFilterOf(/synology/iu)).toBeNull();
  });

  it('tests containment, or the start for an anchored literal', () => {
    const filter = literalFilterOf(/^QNAP\b|\bQuTS\b/i)!;
    expect(mayMatch(filter, 'qnap ts-453d')).toBe(true);
    expect(mayMatch(filter, 'my qnap')).toBe(false);
    expect(mayMatch(filter, 'hero quts 5')).toBe(true);
  });

  // Every value any rule example gives, of any field: the table's patterns are tried on all of them.
  const pool = [
    ...new Set(
      FINGERPRINT_RULES.flatMap((r) =>
        [...r.examples.match, ...r.examples.noMatch].flatMap((e: FingerprintExample) =>
          typeof e === 'string'
            ? [e]
            : Object.entries(e).flatMap(([k, v]) => (k === 'ports' ? [] : typeof v === 'string' ? [v] : [...(v as string[])])),
        ),
      ),
    ),
  ];
  const patterns = FINGERPRINT_RULES.flatMap((r) => r.when.flatMap((c) => ('pattern' in c ? [{ id: r.id, pattern: c.pattern }] : [])));

  it('never holds back a rule example its pattern matches', () => {
    const held: string[] = [];
    for (const { id, pattern } of patterns) for (const v of pool) if (pattern.test(v) && !passes(pattern, v)) held.push(`${id}: ${v}`);
    expect(held).toEqual([]);
    // Most of the table's patterns have a filter (the point of it).
    expect(patterns.filter((p) => literalFilterOf(p.pattern) !== null).length).toBeGreaterThan(patterns.length / 2);
  });

  it('never holds back a generated value its pattern matches (case changed, text around, characters dropped)', () => {
    const valueArb = fc
      .tuple(
        fc.constantFrom(...pool),
        fc.string({ maxLength: 6 }),
        fc.string({ maxLength: 6 }),
        fc.constantFrom('none', 'upper', 'lower', 'swap'),
        fc.nat(),
      )
      .map(([v, before, after, casing, drop]) => {
        let text = casing === 'upper' ? v.toUpperCase() : casing === 'lower' ? v.toLowerCase() : v;
        if (casing === 'swap') text = [...text].map((c, i) => (i % 2 ? c.toUpperCase() : c.toLowerCase())).join('');
        if (drop % 3 === 0 && text.length > 0) text = text.slice(0, drop % text.length) + text.slice((drop % text.length) + 1);
        return `${drop % 2 ? before : ''}${text}${after}`;
      });
    fc.assert(
      fc.property(valueArb, (v) => {
        for (const { id, pattern } of patterns)
          if (pattern.test(v) && !passes(pattern, v)) throw new Error(`${id}: ${pattern} matches ${JSON.stringify(v)}`);
      }),
      { numRuns: 500 },
    );
  });
});
