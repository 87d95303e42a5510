import { describe, expect, it } from 'vitest';
import { compareSemver, parseReleaseFeed } from '../../src/core/release.js';

describe('compareSemver', () => {
  it.each([
    ['1.2.3', '1.2.4', -1],
    ['1.10.0', '1.9.9', 1],
    ['2.0.0', '2.0.0', 0],
    ['v1.0.0', '1.0.0', 0],
    ['1.0.0-rc.1', '1.0.0', -1],
    ['1.0.0-alpha', '1.0.0-beta', -1],
    ['1.0.0-rc.2', '1.0.0-rc.10', -1],
    ['1.0', '1.0.1', -1],
  ])('%s vs %s → %i', (a, b, sign) => {
    expect(Math.sign(compareSemver(a, b))).toBe(sign);
  });
});

describe('parseReleaseFeed', () => {
  it('reads a GitHub latest-release object', () => {
    expect(
      parseReleaseFeed({ tag_name: 'v1.4.0', html_url: 'https://example.test/r/1.4.0', body: 'notes', published_at: '2026-10-01T00:00:00Z' }),
    ).toEqual({ version: '1.4.0', url: 'https://example.test/r/1.4.0', notes: 'notes', published_at: '2026-10-01T00:00:00Z' });
  });

  it('skips drafts and pre-releases in a list', () => {
    const result = parseReleaseFeed([
      { tag_name: 'v2.0.0-rc.1', prerelease: true },
      { tag_name: 'v1.9.0', draft: false, prerelease: false },
    ]);
    expect(result).toMatchObject({ version: '1.9.0' });
  });

  it('drops non-http links', () => {
    expect(parseReleaseFeed({ version: '1.0.0', url: 'javascript:alert(1)' })).toMatchObject({ url: null });
  });

  it.each([[null], ['text'], [{}], [{ tag_name: 'latest' }], [[]]])('explains an unusable document %j', (doc) => {
    expect(parseReleaseFeed(doc)).toHaveProperty('error');
  });
});
