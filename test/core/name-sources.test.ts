/**
 * How the network's records are applied to a scan's hosts: they fill what the scan did not see,
 * never override what it saw, and the source order decides between sources fact by fact.
 */
import { describe, expect, it } from 'vitest';
import type { DiscoveredHost } from '../../src/core/model.js';
import { applyNames, cleanHostname, normalizeRecords } from '../../src/core/name-sources.js';

const host = (ip: string, mac: string | null = null, hostname: string | null = null): DiscoveredHost => ({ ip, mac, hostname, vendor: null });

describe('name sources applied to discovered hosts', () => {
  it('fills a missing hostname and MAC with their source, never overriding what the scan saw', () => {
    const records = normalizeRecords([
      { ip: '10.0.0.1', hostname: 'router', mac: 'aa:bb:cc:00:00:01', source: 'pihole' },
      { ip: '10.0.0.2', hostname: 'from-pihole', mac: 'aa:bb:cc:00:00:02', source: 'pihole' },
      { ip: '10.0.0.3', hostname: 'nas', source: 'pihole' },
    ]);
    const out = applyNames(
      [host('10.0.0.1'), host('10.0.0.2', '02:00:00:00:00:02', 'seen-by-scan'), host('10.0.0.3', '02:00:00:00:00:03'), host('10.0.0.9')],
      records,
    );
    expect(out).toEqual([
      { ...host('10.0.0.1', 'AA:BB:CC:00:00:01', 'router'), hostname_source: 'pihole', mac_source: 'pihole' },
      host('10.0.0.2', '02:00:00:00:00:02', 'seen-by-scan'),
      { ...host('10.0.0.3', '02:00:00:00:00:03', 'nas'), hostname_source: 'pihole' },
      host('10.0.0.9'),
    ]);
  });

  it('takes each fact from the first source in order that has it', () => {
    const records = [
      ...normalizeRecords([{ ip: '10.0.0.5', mac: '00:11:22:33:44:55', source: 'dhcp_leases', hostname: 'lease-name' }]),
      ...normalizeRecords([{ ip: '10.0.0.5', hostname: 'Living room TV', source: 'unifi' }]),
    ];
    expect(applyNames([host('10.0.0.5')], records)).toEqual([
      { ...host('10.0.0.5', '00:11:22:33:44:55', 'Living room TV'), hostname_source: 'unifi', mac_source: 'dhcp_leases' },
    ]);
  });

  it('drops what is not a usable record', () => {
    expect(
      normalizeRecords([
        { ip: 'fd00::1', hostname: 'v6', source: 'pihole' },
        { ip: '10.0.0.7', hostname: '*', mac: 'ip-10.0.0.7', source: 'pihole' },
        { ip: '10.0.0.8', hostname: '10.0.0.8', source: 'pihole' },
        { ip: ' 10.0.0.9 ', hostname: 'ok.lan.', source: 'pihole' },
        { ip: '10.0.0.9', mac: '00:00:00:00:00:09', source: 'pihole' },
      ]),
    ).toEqual([{ ip: '10.0.0.9', hostname: 'ok.lan', mac: '00:00:00:00:00:09', source: 'pihole' }]);
    expect(cleanHostname('bad\u0000name')).toBeNull();
    expect(cleanHostname(42)).toBeNull();
  });
});
