/**
 * The pure parts of issue 23's daily loop: which version fixes a CVE (core/cve/fixes.ts), how sure
 * a CVE match is, the few words beside a risk badge (core/risk-reason.ts) and a device's own
 * presence threshold ("can sleep", core/presence.ts).
 */
import { describe, expect, it } from 'vitest';
import { detectionOf, fixedIn } from '../../src/core/cve/index.js';
import { decidePresence } from '../../src/core/presence.js';
import { riskReason } from '../../src/core/risk-reason.js';

describe('fixedIn', () => {
  const ssh = (range: Record<string, string>) => [{ cpe: 'openbsd:openssh', ...range }];
  it('is the exclusive upper bound of the range the detected version lies in', () => {
    expect(fixedIn(ssh({ versionEndExcluding: '9.8p1' }), '7.4')).toBe('9.8p1');
    expect(fixedIn([...ssh({ versionEndExcluding: '5.2' }), ...ssh({ versionStartIncluding: '7.0', versionEndExcluding: '7.6' })], '7.4')).toBe(
      '7.6',
    );
  });
  it('is unknown when the data does not say or the version is outside every range or unreadable', () => {
    expect(fixedIn(ssh({ versionEndIncluding: '9.7' }), '7.4')).toBeNull();
    expect(fixedIn(ssh({ version: '7.4' }), '7.4')).toBeNull();
    expect(fixedIn([{ cpe: 'openbsd:openssh', versionIndependent: true }], '7.4')).toBeNull();
    expect(fixedIn(ssh({ versionEndExcluding: '7.0' }), '7.4')).toBeNull();
    expect(fixedIn(ssh({ versionEndExcluding: '9.8' }), null)).toBeNull();
    // Only the matched product's ranges count: Terrapin names Dropbear too, bounded inclusively.
    const terrapin = [...ssh({ versionEndExcluding: '9.6' }), { cpe: 'dropbear_ssh_project:dropbear_ssh', versionEndIncluding: '2022.83' }];
    expect(fixedIn(terrapin, '7.4', 'OpenSSH')).toBe('9.6');
    expect(fixedIn(terrapin, '7.4')).toBeNull();
    // One containing range without an exclusive bound makes the whole answer unknown.
    expect(fixedIn([...ssh({ versionEndExcluding: '9.8' }), ...ssh({ versionEndIncluding: '9.9' })], '7.4')).toBeNull();
  });
});

describe('detectionOf', () => {
  it('explains a confirmed match, and a likely one from a distribution banner or an unseen patch level', () => {
    expect(detectionOf('confirmed', { version: '7.4', extra_info: 'protocol 2.0' }).confidence).toBe('confirmed');
    const banner = detectionOf('likely', { version: '8.9p1 Ubuntu 3ubuntu0.10', extra_info: 'Ubuntu Linux; protocol 2.0' });
    expect(banner.confidence).toBe('likely');
    expect(banner.reason).toMatch(/banner.*back-ports/);
    expect(detectionOf('likely', { version: null, extra_info: null }).reason).toMatch(/patch level/);
  });
});

describe('riskReason', () => {
  const f = (kind: string, title: string, severity: string, cve_id: string | null = null) => ({ kind, title, severity, cve_id });
  it('names the worst rule finding and counts CVEs with the exploited ones, worse part first', () => {
    expect(riskReason([], new Set())).toBeNull();
    expect(riskReason([f('rule', 'Telnet remote login exposed', 'critical')], new Set())).toBe('Telnet remote login exposed');
    const cves = [f('cve', 'a', 'high', 'CVE-1'), f('cve', 'b', 'medium', 'CVE-2'), f('cve', 'c', 'low', 'CVE-3')];
    expect(riskReason(cves, new Set(['CVE-2']))).toBe('3 CVEs · 1 exploited');
    expect(riskReason([f('rule', 'FTP', 'medium'), f('policy', 'Port 23 forbidden in IoT', 'high'), ...cves], new Set())).toBe(
      'Port 23 forbidden in IoT +1 · 3 CVEs',
    );
    expect(riskReason([f('rule', 'FTP', 'medium'), cves[0]], new Set(['CVE-1']))).toBe('1 CVE · 1 exploited · FTP');
  });
});

describe('decidePresence with a device that can sleep', () => {
  it('takes each device offline at its own threshold, the setting applying to the others', () => {
    const missing = [
      { deviceId: 1, online: true, missedScans: 1 },
      { deviceId: 2, online: true, missedScans: 1, offlineAfterScans: 3 },
      { deviceId: 3, online: true, missedScans: 2, offlineAfterScans: 3 },
      { deviceId: 4, online: true, missedScans: 0, offlineAfterScans: null },
    ];
    const out = decidePresence({ seen: [], missing, offlineAfterScans: 2 });
    expect(out.removed).toEqual([1, 3]);
    expect(out.updates.map((u) => [u.deviceId, u.online, u.missedScans])).toEqual([
      [1, false, 2],
      [2, true, 2],
      [3, false, 3],
      [4, true, 1],
    ]);
  });
});
