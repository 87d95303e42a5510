/**
 * The name_sources settings: off by default, checked when enabled, and their passwords under
 * CONTRACT §9's rule, the same code as updates.token: masked on read, the mask sent back keeps
 * the stored value, and a new destination URL without the password given again clears it.
 */
import { describe, expect, it } from 'vitest';
import { SECRET_MASK } from '../../src/core/limits.js';
import { applySettingsPatch, defaultSettings, maskSettings, type Settings } from '../../src/core/settings.js';

function patched(current: Settings, patch: unknown): Settings {
  const result = applySettingsPatch(current, patch);
  if (!result.ok) throw new Error(result.error);
  return result.settings;
}

describe('name_sources settings', () => {
  it('are all off by default', () => {
    const s = defaultSettings().name_sources;
    expect([s.pihole.enabled, s.adguard.enabled, s.unifi.enabled, s.dhcp_leases.enabled]).toEqual([false, false, false, false]);
    expect(s.unifi.site).toBe('default');
  });

  it('refuse an enabled source without an address, a URL with credentials, and a relative lease path', () => {
    const current = defaultSettings();
    const errorOf = (patch: unknown) => {
      const r = applySettingsPatch(current, patch);
      return r.ok ? null : r.error;
    };
    expect(errorOf({ name_sources: { pihole: { enabled: true } } })).toBe(
      'name_sources.pihole.url: must be an http:// or https:// URL while the source is enabled',
    );
    expect(errorOf({ name_sources: { adguard: { url: 'ftp://adguard.lan' } } })).toBe(
      'name_sources.adguard.url: must be an http:// or https:// URL, or "" for none',
    );
    expect(errorOf({ name_sources: { unifi: { url: 'https://admin:pw@unifi.lan:8443' } } })).toMatch(
      /^name_sources\.unifi\.url: must not carry credentials/,
    );
    expect(errorOf({ name_sources: { dhcp_leases: { enabled: true, path: 'dnsmasq.leases' } } })).toMatch(
      /^name_sources\.dhcp_leases\.path: must be the absolute path/,
    );
    expect(errorOf({ name_sources: { unifi: { site: 'my site' } } })).toMatch(/^name_sources\.unifi\.site: /);
    expect(errorOf({ name_sources: { dhcp_leases: { format: 'csv' } } })).toBe(
      'name_sources.dhcp_leases.format: must be one of auto, dnsmasq, isc, kea',
    );
  });

  for (const source of ['pihole', 'adguard', 'unifi'] as const) {
    it(`${source}: the password is masked, kept by the mask, and never follows a new URL`, () => {
      let s = patched(defaultSettings(), { name_sources: { [source]: { enabled: true, url: 'http://192.168.1.2', password: 'hunter2' } } });
      expect(s.name_sources[source].password).toBe('hunter2');
      expect(maskSettings(s).name_sources[source].password).toBe(SECRET_MASK);
      // The masked document sent back as it was read keeps the password.
      s = patched(s, { name_sources: maskSettings(s).name_sources });
      expect(s.name_sources[source].password).toBe('hunter2');
      // Another key of the same source changed: the password stays.
      s = patched(s, { name_sources: { [source]: { enabled: false } } });
      expect(s.name_sources[source].password).toBe('hunter2');
      // A new destination with the mask (or nothing) for the password: cleared.
      const moved = patched(s, { name_sources: { [source]: { url: 'http://203.0.113.9', password: SECRET_MASK } } });
      expect(moved.name_sources[source].password).toBe('');
      expect(patched(s, { name_sources: { [source]: { url: 'http://203.0.113.9' } } }).name_sources[source].password).toBe('');
      // A new destination with the password given again: kept.
      expect(patched(s, { name_sources: { [source]: { url: 'http://192.168.1.3', password: 'new' } } }).name_sources[source].password).toBe('new');
      // Moving one source's address never touches another's password.
      const other = source === 'pihole' ? 'adguard' : 'pihole';
      const both = patched(s, { name_sources: { [other]: { url: 'http://192.168.1.7', password: 'other' } } });
      expect(patched(both, { name_sources: { [source]: { url: 'http://192.168.1.8' } } }).name_sources[other].password).toBe('other');
      // updates.token keeps its own rule.
      expect(maskSettings(s).updates.token).toBe('');
    });
  }
});
