import { describe, expect, it } from 'vitest';
import { suggestSubnet } from '../../src/core/subnet-suggestion.js';

const allowed = { cidrs: ['127.0.0.0/8', '10.66.0.0/24'], source: 'NETWARDEN_SCAN_ALLOW' };

describe('suggestSubnet', () => {
  it('takes the configured subnet when a scan would accept it', () => {
    expect(suggestSubnet({ configured: '10.66.0.0/25', detected: '127.0.0.0/24', allowed, maxHosts: 1024 })).toMatchObject({
      subnet: '10.66.0.0/25',
      source: 'configured',
    });
  });

  it('skips a configured subnet outside the allowed targets for the detected local network', () => {
    expect(suggestSubnet({ configured: '192.168.1.0/24', detected: '127.0.0.0/24', allowed, maxHosts: 1024 })).toMatchObject({
      subnet: '127.0.0.0/24',
      source: 'detected',
    });
  });

  it('falls back to the first allowed target that fits the size limit, then to the start of one cut to it', () => {
    const first = suggestSubnet({ configured: '192.168.1.0/24', detected: '172.17.0.0/16', allowed, maxHosts: 1024 });
    expect(first).toMatchObject({ subnet: '10.66.0.0/24', source: 'allowed_targets' });
    expect(first.detail).toContain('NETWARDEN_SCAN_ALLOW');
    const cut = suggestSubnet({
      configured: '192.168.1.0/24',
      detected: null,
      allowed: { cidrs: ['127.0.0.0/8'], source: 'scanning.allowed_targets' },
      maxHosts: 1000,
    });
    expect(cut).toMatchObject({ subnet: '127.0.0.0/23', source: 'allowed_targets' });
    expect(cut.detail).toContain('cut to the scan size limit');
  });

  it('suggests nothing rather than a subnet that would be refused', () => {
    expect(
      suggestSubnet({ configured: '192.168.1.0/24', detected: null, allowed: { cidrs: [], source: 'scanning.allowed_targets' }, maxHosts: 256 }),
    ).toMatchObject({
      subnet: null,
      source: null,
    });
  });
});
