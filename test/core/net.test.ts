import { describe, expect, it } from 'vitest';
import {
  countPorts,
  formatPortRanges,
  intToIpv4,
  ipv4ToInt,
  isIpv4Address,
  networkContains,
  parseIpv4Network,
  parsePortRanges,
} from '../../src/core/net.js';

describe('isIpv4Address', () => {
  it.each([
    ['192.168.1.1', true],
    ['0.0.0.0', true],
    ['255.255.255.255', true],
    ['256.1.1.1', false],
    ['01.2.3.4', false],
    ['1.2.3', false],
    ['1.2.3.4.5', false],
    ['0x7f.0.0.1', false],
    [' 1.2.3.4', false],
    ['::1', false],
    ['', false],
  ])('%s → %s', (text, expected) => {
    expect(isIpv4Address(text)).toBe(expected);
  });
});

describe('parseIpv4Network', () => {
  it.each([
    ['192.168.1.0/24', '192.168.1.0/24', 256],
    ['192.168.1.77/24', '192.168.1.0/24', 256],
    ['10.0.0.5', '10.0.0.5/32', 1],
    ['10.1.2.3/16', '10.1.0.0/16', 65_536],
    ['0.0.0.0/0', '0.0.0.0/0', 4_294_967_296],
    ['172.16.5.4/30', '172.16.5.4/30', 4],
  ])('%s → %s (%i addresses)', (text, cidr, size) => {
    const parsed = parseIpv4Network(text);
    expect(parsed).toMatchObject({ ok: true, value: { cidr, size } });
  });

  it.each(['192.168.1.0/33', '192.168.1.0/', '192.168.1/24', 'fe80::/64', 'lan', '1.2.3.4/24/1', '1.2.3.4/-1', '1.2.3.4/0x10'])(
    'rejects %s with an actionable message',
    (text) => {
      const parsed = parseIpv4Network(text);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.error).toContain('192.168.1.0/24');
    },
  );

  it('tells whether an address is inside a block', () => {
    const parsed = parseIpv4Network('10.66.0.0/24');
    if (!parsed.ok) throw new Error(parsed.error);
    expect(networkContains(parsed.value, '10.66.0.255')).toBe(true);
    expect(networkContains(parsed.value, '10.66.1.0')).toBe(false);
  });
});

describe('IPv4 integer conversion', () => {
  it('round-trips and orders numerically', () => {
    for (const ip of ['0.0.0.0', '10.0.0.9', '10.0.0.10', '192.168.255.1', '255.255.255.255']) {
      expect(intToIpv4(ipv4ToInt(ip))).toBe(ip);
    }
    expect(ipv4ToInt('10.0.0.9')).toBeLessThan(ipv4ToInt('10.0.0.10'));
    expect(ipv4ToInt('255.255.255.255')).toBe(4_294_967_295);
  });
});

describe('parsePortRanges', () => {
  it.each([
    ['1-1000', '1-1000', 1000],
    ['22', '22', 1],
    ['443,22,80', '22,80,443', 3],
    ['1-100,50-200', '1-200', 200],
    ['1-10,11-20', '1-20', 20],
    [' 22 , 8000 - 8010 ', '22,8000-8010', 12],
    ['1-65535', '1-65535', 65_535],
  ])('%s → %s', (text, canonical, count) => {
    const parsed = parsePortRanges(text);
    if (!parsed.ok) throw new Error(parsed.error);
    expect(formatPortRanges(parsed.value)).toBe(canonical);
    expect(countPorts(parsed.value)).toBe(count);
  });

  it.each(['', '0-10', '10-5', '1-65536', 'abc', '22,', '-5', '1--5', '80;443', '1e3'])('rejects %j', (text) => {
    const parsed = parsePortRanges(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toContain('1-1000');
  });
});
