/**
 * The probes' parsers on arbitrary input (fast-check): whatever a host sends, they return a value
 * of the promised shape, within the promised bounds, and never throw.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { titleOf } from '../../src/probes/http.js';
import { pickHostKey, sshFingerprint } from '../../src/probes/ssh.js';
import { descriptionUrl, parseDescription, parseSsdpAnswer } from '../../src/probes/ssdp.js';
import { cleanText, decodeEntities } from '../../src/probes/text.js';
import { parseSans } from '../../src/probes/tls.js';

const bytes = fc.uint8Array({ maxLength: 4096 }).map((b) => Buffer.from(b));
const text = fc.string({ maxLength: 2000, unit: 'binary' });

describe('probe parsers on arbitrary input', () => {
  it('SSDP answers and device descriptions', () => {
    fc.assert(
      fc.property(bytes, text, (datagram, xml) => {
        const headers = parseSsdpAnswer(datagram);
        if (headers) expect(headers.size).toBeLessThanOrEqual(63);
        const fields = parseDescription(xml);
        for (const value of Object.values(fields)) if (value !== null) expect(value.length).toBeLessThanOrEqual(256);
        expect(() => descriptionUrl(xml, '10.0.0.1')).not.toThrow();
      }),
    );
    // Well-formed but deep or odd XML.
    expect(parseDescription(`${'<a>'.repeat(500)}x${'</a>'.repeat(500)}`).modelName).toBeNull();
  });

  it('page titles, SANs and host keys', () => {
    fc.assert(
      fc.property(bytes, text, fc.option(text, { nil: undefined }), (body, anything, contentType) => {
        const title = titleOf(body, contentType);
        if (title !== null) expect(title.length).toBeLessThanOrEqual(200);
        const withTitle = titleOf(Buffer.from(`<title>${anything}</title>`), contentType);
        if (withTitle !== null) expect(withTitle.length).toBeLessThanOrEqual(200);
        expect(parseSans(anything).length).toBeLessThanOrEqual(64);
        expect(() => pickHostKey(anything)).not.toThrow();
        expect(() => sshFingerprint('ssh-ed25519', anything)).not.toThrow();
      }),
    );
  });

  it('text cleaning: no control characters, bounded, entities decoded once', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 300 }), (raw, max) => {
        const clean = cleanText(decodeEntities(raw), max);
        if (clean !== null) {
          expect(clean.length).toBeLessThanOrEqual(max);
          // eslint-disable-next-line no-control-regex
          expect(clean).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
        }
      }),
    );
    expect(decodeEntities('&amp;lt; &#x41; &#65; &bogus; &#0; &#xD800;')).toBe('&lt; A A &bogus; &#0; &#xD800;');
  });
});
