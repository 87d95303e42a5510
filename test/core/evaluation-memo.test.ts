/**
 * The evaluation's memos and shortcuts (src/core/memo.ts; the CVE matcher's port memo, the risk rule
 * set's cache and the CVE-finding memo in risk.ts; detectChanges skipping unchanged devices) change
 * how fast, never what. Over random devices running the same software with small differences, called
 * in sequence so the memos are warm (what one device leaves in them must not leak into the next
 * one's results), outputs equal:
 * - for matchCves, matching each device with an empty memo (an index built for it alone). The memo
 *   keyed by one string used to take a version '' for none and return the other's matches;
 * - for assessRisk and detectChanges, the implementation before the memos, kept below as the reference.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  detectChanges,
  describeDevice,
  describeService,
  type ChangeDraft,
  type DetectOptions,
  type DeviceState,
  type PortState,
} from '../../src/core/changes.js';
import { covers } from '../../src/core/coverage.js';
import { buildCveIndex, matchCves } from '../../src/core/cve/index.js';
import { isOpenPort, type ScannedPort } from '../../src/core/model.js';
import {
  FIRST_FINDING_POINTS,
  FURTHER_FINDING_POINTS,
  assessRisk,
  compileRiskRules,
  cveSeverity,
  portRiskSeverity,
  summarizeFindings,
  type RiskAssessment,
  type RiskCveInput,
  type RiskFinding,
  type RiskPortInput,
} from '../../src/core/risk.js';
import { RISK_SCORE_BANDS, SEVERITY_RANK, worstFirst, type RiskLevel } from '../../src/core/severity.js';
import { loadShippedCves } from '../../src/cve/dataset.js';

const shipped = loadShippedCves();
/** Shared by every run of every property: the memos stay warm between devices and runs. */
const warmIndex = buildCveIndex(shipped);
const warmRules = compileRiskRules([]);

/* ------------------------------------------------------------------------------------------------
 * Inputs: small pools, so that devices repeat each other's software (memo hits) and differ in the
 * details a memo key could miss (null / '' / blank, case, distribution suffixes, CPE lists).
 * --------------------------------------------------------------------------------------------- */

const portArb: fc.Arbitrary<ScannedPort> = fc.record({
  port: fc.constantFrom(21, 22, 23, 25, 80, 139, 443, 445, 3306, 8080),
  protocol: fc.constantFrom<'tcp' | 'udp'>('tcp', 'tcp', 'tcp', 'udp'),
  state: fc.constantFrom('open', 'open', 'open', ' Open ', 'filtered', 'open|filtered'),
  service: fc.constantFrom(null, '', 'ssh', 'http', 'ssl/http', 'https', 'ftp', 'telnet', 'microsoft-ds', 'netbios-ssn', 'mysql', 'smtp', 'unknown'),
  product: fc.constantFrom(
    null,
    '',
    ' ',
    'OpenSSH',
    'nginx',
    'Apache httpd',
    'vsftpd',
    'ProFTPD',
    'Samba smbd',
    'Microsoft IIS httpd',
    'Microsoft Windows RPC',
    'MySQL',
    'Exim smtpd',
  ),
  version: fc.constantFrom(
    null,
    '',
    '8.9p1 Ubuntu 3ubuntu0.10',
    '9.2p1 Debian 2+deb12u3',
    '9.7p1',
    '4.7p1',
    '2.4.49',
    '2.4.62',
    '1.18.0',
    '2.3.4',
    '1.3.5',
    '3.0.20-Debian',
    '3.X - 4.X',
    '5.5.5-10.3.39-MariaDB-0+deb12u1',
    '4.92',
    '7.5',
  ),
  extra_info: fc.constantFrom(null, '', 'Ubuntu Linux; protocol 2.0', 'protocol 2.0', 'workgroup: WORKGROUP', '(Debian)', 'Red Hat'),
  cpe: fc.subarray([
    'cpe:/a:openbsd:openssh:8.9p1',
    'cpe:/a:openbsd:openssh',
    'cpe:/a:apache:http_server:2.4.49',
    'cpe:/a:vsftpd:vsftpd:2.3.4',
    'cpe:/a:igor_sysoev:nginx:1.18.0',
    'cpe:/a:samba:samba',
    'cpe:/a:microsoft:internet_information_services:7.5',
    'cpe:/o:microsoft:windows',
    'cpe:/o:canonical:ubuntu_linux',
    'cpe:/o:linux:linux_kernel',
  ]),
});

const osArb = fc.constantFrom(
  null,
  'Linux 5.0 - 5.14',
  'Microsoft Windows Server 2019',
  'Microsoft Windows 7 SP1',
  'Microsoft Windows 10 1909 - 2004',
);

/** Small differences a memo key must not miss: the same software, one detail changed. */
const TWEAKS: readonly ((p: ScannedPort) => ScannedPort)[] = [
  (p) => ({ ...p, cpe: [...p.cpe] }),
  (p) => ({ ...p, version: '' }),
  (p) => ({ ...p, version: null }),
  (p) => ({ ...p, version: p.version === null ? '2.4.49' : `${p.version} ` }),
  (p) => ({ ...p, product: '' }),
  (p) => ({ ...p, product: null }),
  (p) => ({ ...p, service: null }),
  (p) => ({ ...p, service: `ssl/${p.service ?? 'http'}` }),
  (p) => ({ ...p, extra_info: 'Ubuntu' }),
  (p) => ({ ...p, cpe: [] }),
  (p) => ({ ...p, cpe: [...p.cpe, 'cpe:/a:openbsd:openssh:9.7p1'] }),
  (p) => ({ ...p, state: 'filtered' }),
  (p) => ({ ...p, protocol: p.protocol === 'tcp' ? 'udp' : 'tcp' }),
  (p) => ({ ...p, port: p.port + 1 }),
];
/** Per port, the tweak to apply (by index in TWEAKS; the first one copies the port unchanged). */
const tweakArb = fc.array(fc.nat(TWEAKS.length - 1), { maxLength: 6 });
const tweak = (ports: readonly ScannedPort[], tweaks: readonly number[]): ScannedPort[] => ports.map((p, i) => TWEAKS[tweaks[i] ?? 0](p));

/** Devices of one network: the same few ports over and over, each device with one detail tweaked. */
const devicesArb = fc
  .record({
    software: fc.array(portArb, { minLength: 1, maxLength: 6 }),
    devices: fc.array(fc.record({ take: fc.nat(6), tweak: tweakArb, os_name: osArb }), { minLength: 1, maxLength: 8 }),
  })
  .map(({ software, devices }) => devices.map((d) => ({ ports: tweak(software.slice(0, d.take), d.tweak), os_name: d.os_name })));

/** CVE inputs as other callers may give them: duplicates, host-level, odd severities, blank ids. */
const cveArb: fc.Arbitrary<RiskCveInput> = fc.record(
  {
    id: fc.constantFrom('CVE-2024-6387', 'CVE-2023-48795', ' CVE-2023-48795', 'CVE-2021-41773', 'CVE-2011-2523', ''),
    severity: fc.constantFrom('critical', 'high', 'medium', 'low', 'Important', 'moderate', 'none', 'unknown'),
    cvss_score: fc.constantFrom(null, 10, 9.8, 8.1, 5.9, 0),
    port: fc.constantFrom(null, 21, 22, 80, 445, 9999),
    confidence: fc.constantFrom('confirmed', 'likely'),
    kev: fc.constantFrom(true, false, undefined),
    remediation: fc.constantFrom(null, undefined, '', 'Upgrade to 9.8p1.', 'Apply the vendor patch'),
    matched_product: fc.constantFrom(null, undefined, '', 'OpenSSH', 'Samba smbd'),
    matched_version: fc.constantFrom(null, undefined, '', '8.9p1', '4.6.2'),
  },
  { requiredKeys: ['id', 'severity', 'cvss_score', 'port', 'confidence'] },
);

/* ------------------------------------------------------------------------------------------------
 * Reference: assessRisk's CVE findings and scoring, and detectChanges' port comparison, as they
 * were before the memos (copied verbatim; the helpers they called are copied below them), with
 * one finding per CVE and its finding_key since CONTRACT §18.
 * --------------------------------------------------------------------------------------------- */

function referenceCveFindings(cves: readonly RiskCveInput[], ports: readonly RiskPortInput[]): RiskFinding[] {
  const groups = new Map<number | null, Map<string, RiskCveInput>>();
  for (const cve of cves) {
    const id = cve.id.trim();
    if (!id) continue;
    const key = typeof cve.port === 'number' ? cve.port : null;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = new Map<string, RiskCveInput>()));
    const seen = group.get(id);
    // The same CVE twice on a port (several CPEs): keep the stronger evidence.
    if (!seen || (seen.confidence !== 'confirmed' && cve.confidence === 'confirmed') || (!seen.kev && cve.kev)) {
      group.set(
        id,
        seen
          ? {
              ...cve,
              kev: Boolean(seen.kev || cve.kev),
              confidence: seen.confidence === 'confirmed' ? 'confirmed' : cve.confidence,
              remediation: cve.remediation ?? seen.remediation,
              matched_product: cve.matched_product ?? seen.matched_product,
              matched_version: cve.matched_version ?? seen.matched_version,
            }
          : cve,
      );
    }
  }
  const findings: RiskFinding[] = [];
  // One finding per CVE (CONTRACT §18): each CVE of a port is a group of its own.
  for (const [portNumber, group] of [...groups].flatMap(([p, byId]) => [...byId].map(([id, c]) => [p, new Map([[id, c]])] as const))) {
    const rank = new Map([...group.values()].map((c) => [c, SEVERITY_RANK[cveSeverity(c)]]));
    const list = [...group.values()].sort(
      (a, b) =>
        rank.get(b)! - rank.get(a)! ||
        Number(Boolean(b.kev)) - Number(Boolean(a.kev)) ||
        (b.cvss_score ?? -1) - (a.cvss_score ?? -1) ||
        a.id.localeCompare(b.id),
    );
    const worst = list[0];
    const severity = cveSeverity(worst);
    const port = portNumber === null ? undefined : pickPort(ports, portNumber);
    const v = port ? viewPort(port) : null;
    const protocol = port ? port.protocol.toLowerCase() : portNumber === null ? null : 'tcp';
    const named = list.find((c) => text(c.matched_product) !== null);
    const software =
      (v && detected(v)) ?? (named ? `${text(named.matched_product)}${text(named.matched_version) ? ` ${text(named.matched_version)}` : ''}` : null);
    const where = portNumber === null ? 'this device' : `port ${portNumber}/${protocol}`;
    const what = software ? `${software}${portNumber === null ? '' : ` on ${where}`}` : `the software on ${where}`;
    const kev = list.filter((c) => c.kev);
    const likely = list.filter((c) => c.confidence !== 'confirmed');
    const n = list.length;

    const shown = list.slice(0, 10).map((c) => {
      const parts: string[] = [cveSeverity(c)];
      if (typeof c.cvss_score === 'number') parts.push(`CVSS ${c.cvss_score.toFixed(1)}`);
      if (c.kev) parts.push('known exploited');
      if (c.confidence !== 'confirmed') parts.push('likely');
      return `${c.id} (${parts.join(', ')})`;
    });
    const description = [
      `${n === 1 ? 'A known vulnerability affects' : `${n} known vulnerabilities affect`} ${what}: ${shown.join(', ')}${n > 10 ? `, and ${n - 10} more` : ''}.`,
      kev.length > 0
        ? `${kev.length === 1 ? `${kev[0].id} is` : `${kev.length} of them are`} in CISA's Known Exploited Vulnerabilities catalogue: attackers are using ${kev.length === 1 ? 'it' : 'them'}.`
        : null,
      severity === 'critical' ? 'Critical severity: exploitation can give an attacker control of the service or the host.' : null,
      likely.length === 0
        ? 'Matched on the detected product and version.'
        : likely.length === n
          ? 'Matched on the product only (these entries affect every version, or the version could not be confirmed).'
          : `${likely.length} of them matched on the product only (the version could not be confirmed).`,
    ]
      .filter((s): s is string => s !== null)
      .join(' ');
    const fix = text(worst.remediation) ?? `Update ${what} to the latest release from the vendor or your distribution's security updates`;
    const recommendation = [
      kev.length > 0 ? `Do this first, ${kev.length === 1 ? 'this flaw is' : 'these flaws are'} exploited in the wild:` : null,
      /[.!]$/.test(fix) ? fix : `${fix}.`,
      portNumber !== null ? `Until it is updated, allow port ${portNumber} only from the machines that need it.` : null,
    ]
      .filter((s): s is string => s !== null)
      .join(' ');
    findings.push({
      finding_key: `cve:${worst.id.trim()}:${portNumber === null ? '-' : protocol === 'tcp' ? portNumber : `${portNumber}/${protocol}`}`,
      kind: 'cve',
      port: portNumber,
      protocol,
      severity,
      score: 0,
      service: v?.reportedService ?? null,
      title: `${n === 1 ? `${worst.id}` : `${n} known vulnerabilities`} in ${software ?? (portNumber === null ? 'this device' : `the service on port ${portNumber}`)}${kev.length > 0 ? ' (actively exploited)' : ''}`,
      description,
      recommendation,
      cve_ids: list.map((c) => c.id.trim()),
      cvss_score: typeof worst.cvss_score === 'number' ? worst.cvss_score : null,
    });
  }
  return findings;
}

function text(value: string | null | undefined): string | null {
  const t = value?.trim();
  return t ? t : null;
}

/** The parts of risk.ts's PortView that the CVE findings read. */
function viewPort(p: RiskPortInput): { product: string | null; version: string | null; reportedService: string | null } {
  return { product: text(p.product), version: text(p.version), reportedService: text(p.service) };
}

function detected(v: { product: string | null; version: string | null }): string | null {
  if (v.product === null) return null;
  return v.version ? `${v.product} ${v.version}` : v.product;
}

function pickPort(ports: readonly RiskPortInput[], port: number): RiskPortInput | undefined {
  let best: RiskPortInput | undefined;
  for (const p of ports) {
    if (p.port !== port) continue;
    const rank = (x: RiskPortInput) => (isOpenPort(x) ? 2 : 0) + (x.protocol.toLowerCase() === 'tcp' ? 1 : 0);
    if (!best || rank(p) > rank(best)) best = p;
  }
  return best;
}

function compareFindings(a: RiskFinding, b: RiskFinding): number {
  return (
    worstFirst(a.severity, b.severity) ||
    (a.port ?? 65_536) - (b.port ?? 65_536) ||
    (a.protocol ?? '').localeCompare(b.protocol ?? '') ||
    Number(a.cve_ids.length > 0) - Number(b.cve_ids.length > 0) ||
    a.title.localeCompare(b.title)
  );
}

function scoreFindings(findings: RiskFinding[]): { level: RiskLevel; score: number } {
  findings.sort(compareFindings);
  if (findings.length === 0) return { level: 'none', score: 0 };
  const level = findings[0].severity;
  const cap = RISK_SCORE_BANDS[level].max;
  let total = 0;
  findings.forEach((f, i) => {
    const points = i === 0 ? FIRST_FINDING_POINTS[f.severity] : FURTHER_FINDING_POINTS[f.severity];
    f.score = Math.max(0, Math.min(points, cap - total));
    total += f.score;
  });
  return { level, score: total };
}

/**
 * assessRisk before the memos. Its rule findings come from assessRisk without CVEs and with a
 * freshly compiled rule set (an empty cache): already sorted, which the stable sort below keeps.
 */
function referenceAssessRisk(ports: readonly RiskPortInput[], cves: readonly RiskCveInput[]): RiskAssessment {
  const ruleFindings = assessRisk(ports, [], compileRiskRules([])).findings.map((f) => ({ ...f, score: 0 }));
  const findings = [...ruleFindings, ...referenceCveFindings(cves, ports)];
  const { level, score } = scoreFindings(findings);
  return { level, score, summary: summarizeFindings(findings), top_recommendation: findings[0]?.recommendation ?? null, findings };
}

function openPorts(device: DeviceState): PortState[] {
  return device.ports.filter(isOpenPort);
}

function key(p: PortState): string {
  return `${p.protocol}/${p.port}`;
}

function who(device: DeviceState) {
  return { device_id: device.deviceId, device_ip: device.ip, device_mac: device.mac };
}

/** detectChanges before the shortcuts, for seen devices that neither arrived nor left. */
function referenceDetectChanges(options: DetectOptions): ChangeDraft[] {
  const before = new Map(options.baseline!.map((d) => [d.deviceId, d]));
  const changes: ChangeDraft[] = [];
  for (const device of options.current) {
    const previous = before.get(device.deviceId);
    if (previous && options.portsScanned) changes.push(...referencePortChanges(previous, device, options));
  }
  return changes;
}

function referencePortChanges(previous: DeviceState, device: DeviceState, options: DetectOptions): ChangeDraft[] {
  const out: ChangeDraft[] = [];
  const was = new Map(openPorts(previous).map((p) => [key(p), p]));
  const now = new Map(openPorts(device).map((p) => [key(p), p]));
  const name = describeDevice(device);

  const examined = options.examinedOn(device.deviceId);
  if (!examined) return out;
  for (const [k, port] of now) {
    if (!covers(examined, port.port, port.protocol)) continue;
    const old = was.get(k);
    if (!old) {
      const risk = options.portRisk(port);
      out.push({
        ...who(device),
        change_type: 'port_opened',
        severity: risk ?? 'low',
        port: port.port,
        protocol: port.protocol,
        old_value: null,
        new_value: describeService(port),
        description: `Port ${port.port}/${port.protocol} (${describeService(port)}) opened on ${name}${risk ? `; it is a ${risk}-risk service` : ''}`,
      });
      continue;
    }
    const oldText = describeService(old);
    const newText = describeService(port);
    if (oldText !== newText) {
      const differentSoftware = (old.service ?? '') !== (port.service ?? '') || (old.product ?? '') !== (port.product ?? '');
      out.push({
        ...who(device),
        change_type: 'service_changed',
        severity: differentSoftware ? 'medium' : 'low',
        port: port.port,
        protocol: port.protocol,
        old_value: oldText,
        new_value: newText,
        description: `Service on port ${port.port}/${port.protocol} of ${name} changed from ${oldText} to ${newText}`,
      });
    }
  }
  for (const [k, port] of was) {
    if (now.has(k) || !covers(examined, port.port, port.protocol)) continue;
    out.push({
      ...who(device),
      change_type: 'port_closed',
      severity: 'info',
      port: port.port,
      protocol: port.protocol,
      old_value: describeService(port),
      new_value: null,
      description: `Port ${port.port}/${port.protocol} (${describeService(port)}) is no longer open on ${name}`,
    });
  }
  return out;
}

/* ------------------------------------------------------------------------------------------------
 * Properties
 * --------------------------------------------------------------------------------------------- */

describe('the evaluation memos change nothing (property, against the reference)', () => {
  it('matchCves with a warm index equals a fresh match of each device', () => {
    fc.assert(
      fc.property(devicesArb, (devices) => {
        for (const d of devices) {
          // An array of entries is indexed on the fly: a new, empty memo for this device alone.
          expect(matchCves(d.ports, warmIndex, { os_name: d.os_name })).toEqual(matchCves(d.ports, shipped, { os_name: d.os_name }));
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('assessRisk with warm memos equals the reference, for matched and hand-made CVEs', () => {
    fc.assert(
      fc.property(devicesArb, fc.array(fc.array(cveArb, { maxLength: 6 }), { maxLength: 8 }), (devices, extras) => {
        for (const [i, device] of devices.entries()) {
          const extra = extras[i] ?? [];
          const cves = [...matchCves(device.ports, warmIndex, { os_name: device.os_name }), ...extra];
          expect(assessRisk(device.ports, cves, warmRules)).toEqual(referenceAssessRisk(device.ports, cves));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('detectChanges equals the reference port by port, unchanged devices included', () => {
    const portState = (p: ScannedPort): PortState => ({
      port: p.port,
      protocol: p.protocol,
      state: p.state,
      service: p.service,
      product: p.product,
      version: p.version,
    });
    // The next scan of a device: the same ports (as new objects), one detail tweaked, reordered, or other ports.
    const pairArb = fc.record({
      before: fc.array(portArb, { maxLength: 6 }),
      next: fc.oneof(fc.constant('reorder' as const), fc.record({ tweaks: tweakArb }), fc.array(portArb, { maxLength: 6 })),
    });
    const nextPorts = ({ before, next }: { before: ScannedPort[]; next: 'reorder' | { tweaks: number[] } | ScannedPort[] }) =>
      next === 'reorder' ? [...before].reverse() : Array.isArray(next) ? next : tweak(before, next.tweaks);
    fc.assert(
      fc.property(fc.array(pairArb, { minLength: 1, maxLength: 8 }), (pairs) => {
        const device = (id: number, ports: ScannedPort[]): DeviceState => ({
          deviceId: id,
          ip: `10.0.0.${id}`,
          mac: null,
          label: id % 2 ? `host-${id}` : null,
          vendor: null,
          trusted: false,
          ports: ports.map(portState),
        });
        const baseline = pairs.map((p, i) => device(i + 1, p.before));
        const current = pairs.map((p, i) => device(i + 1, nextPorts(p)));
        const options: DetectOptions = {
          baseline,
          current,
          portsScanned: true,
          examinedOn: () => ({ tcp: [{ low: 1, high: 7999 }], udp: [{ low: 1, high: 7999 }] }),
          portRisk: (port) => portRiskSeverity(port, warmRules),
          presence: { arrived: [], removed: [] },
        };
        expect(detectChanges(options)).toEqual(referenceDetectChanges(options));
      }),
      { numRuns: 300 },
    );
  });
});
