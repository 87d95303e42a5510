import { describe, expect, it } from 'vitest';
import { SECRET_MASK } from '../../src/core/limits.js';
import { applySettingsPatch, defaultSettings, maskSettings, mergeSettings, validateSettings, withDefaults } from '../../src/core/settings.js';

describe('default settings', () => {
  it('are valid and carry the contract defaults', () => {
    const result = validateSettings(defaultSettings());
    expect(result.ok).toBe(true);
    const d = defaultSettings();
    expect(d.zones).toEqual(['Servers', 'Network', 'Workstations', 'IoT', 'DMZ', 'Guest']);
    expect(d.scanning.max_hosts).toBe(65_536);
    expect(d.network.resolve_hostnames).toBe(false);
  });
});

describe('mergeSettings', () => {
  it('merges objects key by key, replaces arrays, and resets null keys to defaults', () => {
    const base = { a: { x: 1, y: 2 }, list: [1, 2], z: 'keep' };
    const merged = mergeSettings(base, { a: { y: 3 }, list: [9], z: null }, { a: { x: 0, y: 0 }, list: [], z: 'default' });
    expect(merged).toEqual({ a: { x: 1, y: 3 }, list: [9], z: 'default' });
    expect(base.a.y).toBe(2);
  });

  it('leaves null on a key with no default, including names Object.prototype has', () => {
    const merged = mergeSettings({ a: 1 }, { toString: null, constructor: null, b: null }, { a: 0 });
    expect(Object.entries(merged as object)).toEqual([
      ['a', 1],
      ['toString', null],
      ['constructor', null],
      ['b', null],
    ]);
  });
});

describe('applySettingsPatch', () => {
  const current = defaultSettings();

  it('changes only the given key', () => {
    const result = applySettingsPatch(current, { scanning: { port_range: '22,80,443' } });
    if (!result.ok) throw new Error(result.error);
    expect(result.settings.scanning.port_range).toBe('22,80,443');
    expect(result.settings.scanning.engine).toBe('auto');
    expect(result.settings.network).toEqual(current.network);
  });

  it('normalises the subnet to its network address', () => {
    const result = applySettingsPatch(current, { network: { subnet: '10.1.2.3/24', exclude: ['10.1.2.1'] } });
    if (!result.ok) throw new Error(result.error);
    expect(result.settings.network.subnet).toBe('10.1.2.0/24');
    expect(result.settings.network.exclude).toEqual(['10.1.2.1/32']);
  });

  it.each([
    [{ network: { subnet: '300.1.1.0/24' } }, 'network.subnet:'],
    [{ network: { subnet: '10.0.0.0/8' } }, 'network.subnet: 10.0.0.0/8 has 16777216 addresses, more than scanning.max_hosts'],
    [{ network: { exclude: ['10.0.0.1', 'router'] } }, 'network.exclude.1:'],
    [{ scanning: { port_range: '100-1' } }, 'scanning.port_range:'],
    [{ scanning: { port_range: 1000 } }, 'scanning.port_range:'],
    [{ scanning: { engine: 'masscan' } }, 'scanning.engine: must be one of auto, nmap, native'],
    [{ scanning: { max_hosts: 0 } }, 'scanning.max_hosts:'],
    [{ scanning: { bogus: true } }, 'scanning.bogus: is not a known configuration key'],
    [{ bogus: {} }, 'bogus: is not a known configuration key'],
    [{ zones: [] }, 'zones:'],
    [{ zones: ['IoT', 'IoT'] }, 'zones:'],
    [{ updates: { feed_url: 'file:///etc/passwd' } }, 'updates.feed_url: must be an http:// or https:// URL'],
    [{ server: { trust_proxy: ['proxy.lan'] } }, 'server.trust_proxy.0:'],
    [
      { scanning: { risk_rules: [{ id: 'x', severity: 'high', title: 'No port or service' }] } },
      'scanning.risk_rules.0: a rule needs a port, a service or both',
    ],
    [
      {
        scanning: {
          risk_rules: [
            { id: 'dup', port: 1, severity: 'low', title: 'a' },
            { id: 'dup', port: 2, severity: 'low', title: 'b' },
          ],
        },
      },
      "scanning.risk_rules.1.id: duplicate rule id 'dup'",
    ],
    [{}, 'body: no configuration keys given'],
    [[], 'body: must be a JSON object'],
  ])('rejects %j naming the path', (patch, message) => {
    const result = applySettingsPatch(current, patch);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain(message);
  });

  it('keeps a stored secret when the mask is sent back', () => {
    const withToken = applySettingsPatch(current, { updates: { token: 's3cret' } });
    if (!withToken.ok) throw new Error(withToken.error);
    const masked = maskSettings(withToken.settings);
    expect(masked.updates.token).toBe(SECRET_MASK);
    const roundTrip = applySettingsPatch(withToken.settings, masked);
    if (!roundTrip.ok) throw new Error(roundTrip.error);
    expect(roundTrip.settings.updates.token).toBe('s3cret');
  });

  it('does not mask an unset secret', () => {
    expect(maskSettings(current).updates.token).toBe('');
  });
});

describe('withDefaults', () => {
  it('fills keys missing from an older stored document', () => {
    const settings = withDefaults({ network: { subnet: '10.9.0.0/24' } });
    expect(settings.network.subnet).toBe('10.9.0.0/24');
    expect(settings.scanning.port_range).toBe('1-1000');
  });
});

describe('scanning.udp_ports', () => {
  it('defaults to the common UDP services, and an older stored document gets them', () => {
    expect(defaultSettings().scanning.udp_ports).toBe('53,67,69,123,137,161,500,1900,5353');
    const older = defaultSettings() as unknown as { scanning: Record<string, unknown> };
    delete older.scanning.udp_ports;
    expect(withDefaults(older).scanning.udp_ports).toBe('53,67,69,123,137,161,500,1900,5353');
  });

  it('takes a port list (stored canonical) or "" for no UDP port', () => {
    const set = (udp_ports: unknown) => applySettingsPatch(defaultSettings(), { scanning: { udp_ports } });
    expect(set(' 161, 53,54,55 ')).toMatchObject({ ok: true, settings: { scanning: { udp_ports: '53-55,161' } } });
    expect(set('')).toMatchObject({ ok: true, settings: { scanning: { udp_ports: '' } } });
    expect(set('  ')).toMatchObject({ ok: true, settings: { scanning: { udp_ports: '' } } });
  });

  it.each([
    ['abc', 'scanning.udp_ports:'],
    ['0', 'scanning.udp_ports:'],
    ['70000', 'scanning.udp_ports:'],
    ['udp:53', 'scanning.udp_ports:'],
    [53, 'scanning.udp_ports:'],
    ['1-2000', 'scanning.udp_ports: lists 2000 ports, more than 1024'],
  ])('refuses %j, naming the key', (udp_ports, message) => {
    const result = applySettingsPatch(defaultSettings(), { scanning: { udp_ports } });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain(message);
  });
});
