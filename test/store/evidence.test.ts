/**
 * The stored form of recognition evidence (src/store/evidence.ts): what is written reads back the
 * same, and the hits of one field read without parsing the rest are those of the whole text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evidenceItems, evidenceOfField, evidenceText, type EvidenceItem } from '../../src/store/evidence.js';

const FIELDS = ['cpe', 'vendor', 'device_type', 'name'];
// Strings that look like the format too: quotes, brackets, backslashes, the field names themselves.
const text = fc.oneof(
  fc.string(),
  fc.constantFrom(...FIELDS, '"cpe"', '["cpe",', '\\', '\\"cpe\\"', '],[', '"', 'x"cpe"', '\u0001', 'ü🙂'),
  fc.array(fc.constantFrom('[', ']', '"', ',', '\\', 'cpe', 'vendor', ' '), { maxLength: 8 }).map((a) => a.join('')),
);
const item: fc.Arbitrary<EvidenceItem> = fc.record({
  field: fc.oneof(fc.constantFrom(...FIELDS), text),
  value: text,
  source: text,
  detail: text,
  confidence: fc.integer({ min: 0, max: 100 }),
});

describe('stored evidence', () => {
  it('reads back what it wrote, in order; none is no text', () => {
    fc.assert(
      fc.property(fc.array(item, { minLength: 1, maxLength: 8 }), (items) => {
        expect(evidenceItems(evidenceText(items)!)).toEqual(items);
      }),
    );
    expect(evidenceText([])).toBeNull();
    expect(evidenceText([{ field: 'cpe', value: 'v', source: 's', detail: 'd', confidence: 59.6 }])).toBe('[["cpe","v","s","d",60]]');
  });

  it('gives the hits of one field as the whole text filtered by it', () => {
    fc.assert(
      fc.property(fc.array(item, { minLength: 1, maxLength: 8 }), fc.constantFrom(...FIELDS), (items, field) => {
        const stored = evidenceText(items)!;
        expect(evidenceOfField(stored, field)).toEqual(evidenceItems(stored).filter((e) => e.field === field));
      }),
      { numRuns: 2000 },
    );
    // Written otherwise (spaces): still every hit.
    expect(evidenceOfField('[ ["cpe", "a", "s", "d", 5], ["vendor","cpe","s","d",1] ]', 'cpe')).toEqual([
      { field: 'cpe', value: 'a', source: 's', detail: 'd', confidence: 5 },
    ]);
  });
});
