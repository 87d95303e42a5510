import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { registerCveCommand } from '../../src/cli/cve.js';
import { matchCves } from '../../src/core/cve/index.js';
import type { ScannedPort } from '../../src/core/model.js';
import {
  CveDatabase,
  emptyImportedFile,
  importedFilePath,
  loadCveDataset,
  loadShippedCves,
  mergeCveData,
  readImportedFile,
} from '../../src/cve/dataset.js';
import { detectFeedType, FeedFormatError, importCveFiles, importKev, importNvdFeed, remediationFor } from '../../src/cve/import.js';

/* ------------------------------------------------------------------------------------------------
 * Sample files in the real formats (shapes as NVD's JSON 2.0 feeds and CISA's catalog publish them)
 * --------------------------------------------------------------------------------------------- */

function nvdCve(
  id: string,
  opts: {
    description?: string;
    cpeMatch?: Record<string, unknown>[];
    v31?: [number, string];
    v2?: [number, string];
    status?: string;
    kev?: { added: string; action: string };
    lastModified?: string;
    extraConfigurations?: unknown[];
  },
): Record<string, unknown> {
  const metrics: Record<string, unknown> = {};
  if (opts.v31) {
    metrics.cvssMetricV31 = [
      {
        source: 'security@example.org',
        type: 'Secondary',
        cvssData: { version: '3.1', vectorString: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:N/A:N', baseScore: 5.3 },
      },
      {
        source: 'nvd@nist.gov',
        type: 'Primary',
        cvssData: { version: '3.1', vectorString: opts.v31[1], baseScore: opts.v31[0], baseSeverity: 'HIGH' },
      },
    ];
  }
  if (opts.v2)
    metrics.cvssMetricV2 = [
      { source: 'nvd@nist.gov', type: 'Primary', cvssData: { version: '2.0', vectorString: opts.v2[1], baseScore: opts.v2[0] } },
    ];
  return {
    cve: {
      id,
      sourceIdentifier: 'cve@mitre.org',
      published: '2025-03-01T10:15:00.000',
      lastModified: opts.lastModified ?? '2025-03-05T12:00:00.000',
      vulnStatus: opts.status ?? 'Analyzed',
      descriptions: [
        { lang: 'es', value: 'Descripción en español.' },
        { lang: 'en', value: opts.description ?? `${id} description.` },
      ],
      metrics,
      ...(opts.kev
        ? { cisaExploitAdd: opts.kev.added, cisaActionDue: '2025-04-01', cisaRequiredAction: opts.kev.action, cisaVulnerabilityName: 'Test' }
        : {}),
      weaknesses: [{ source: 'nvd@nist.gov', type: 'Primary', description: [{ lang: 'en', value: 'CWE-787' }] }],
      configurations: [{ nodes: [{ operator: 'OR', negate: false, cpeMatch: opts.cpeMatch ?? [] }] }, ...(opts.extraConfigurations ?? [])],
      references: [{ url: 'https://example.org/advisory', source: 'cve@mitre.org', tags: ['Vendor Advisory'] }, { url: 'not a url' }],
    },
  };
}

const NEW_OPENSSH = 'CVE-2099-0001';
const NEW_LIGHTTPD = 'CVE-2099-0002';
const OS_ONLY = 'CVE-2099-0003';
const REJECTED = 'CVE-2099-0004';
const KEV_IN_FEED = 'CVE-2099-0005';

function nvdFeed(): Record<string, unknown> {
  return {
    resultsPerPage: 6,
    startIndex: 0,
    totalResults: 6,
    format: 'NVD_CVE',
    version: '2.0',
    timestamp: '2025-03-06T00:00:00.000',
    vulnerabilities: [
      nvdCve(NEW_OPENSSH, {
        description: 'A made-up flaw in sshd.',
        v31: [9.8, 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H'],
        cpeMatch: [
          {
            vulnerable: true,
            criteria: 'cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*',
            versionStartIncluding: '9.0',
            versionEndExcluding: '9.9',
            matchCriteriaId: 'X',
          },
          { vulnerable: true, criteria: 'cpe:2.3:a:openbsd:openssh:8.5:p1:*:*:*:*:*:*', matchCriteriaId: 'Y' },
          { vulnerable: false, criteria: 'cpe:2.3:o:linux:linux_kernel:-:*:*:*:*:*:*:*', matchCriteriaId: 'Z' },
        ],
      }),
      nvdCve(NEW_LIGHTTPD, {
        v2: [5.0, 'AV:N/AC:L/Au:N/C:N/I:N/A:P'],
        cpeMatch: [{ vulnerable: true, criteria: 'cpe:2.3:a:lighttpd:lighttpd:*:*:*:*:*:*:*:*', versionEndIncluding: '1.4.70' }],
      }),
      nvdCve(OS_ONLY, {
        v31: [7.5, 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H'],
        cpeMatch: [{ vulnerable: true, criteria: 'cpe:2.3:o:microsoft:windows_10:-:*:*:*:*:*:*:*' }],
      }),
      nvdCve(REJECTED, { status: 'Rejected', description: '** REJECT ** Duplicate.' }),
      // A shipped CVE: NVD refreshes its score, references and ranges.
      nvdCve('CVE-2024-6387', {
        v31: [8.1, 'CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:H/A:H'],
        cpeMatch: [
          { vulnerable: true, criteria: 'cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*', versionEndExcluding: '4.4' },
          { vulnerable: true, criteria: 'cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*', versionStartIncluding: '8.6', versionEndExcluding: '9.8' },
          { vulnerable: true, criteria: 'cpe:2.3:a:openbsd:openssh:8.5:p1:*:*:*:*:*:*' },
        ],
      }),
      nvdCve(KEV_IN_FEED, {
        v31: [8.8, 'CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:H'],
        kev: { added: '2025-03-04', action: 'Apply mitigations per vendor instructions.' },
        cpeMatch: [{ vulnerable: true, criteria: 'cpe:2.3:a:exim:exim:4.97:*:*:*:*:*:*:*' }],
      }),
    ],
  };
}

function kevCatalog(): Record<string, unknown> {
  const item = (cveID: string, product: string) => ({
    cveID,
    vendorProject: 'Vendor',
    product,
    vulnerabilityName: `${product} vulnerability`,
    dateAdded: '2025-03-10',
    shortDescription: 'Something is exploited.',
    requiredAction: 'Apply mitigations per vendor instructions or discontinue use of the product if mitigations are unavailable.',
    dueDate: '2025-03-31',
    knownRansomwareCampaignUse: 'Unknown',
    notes: '',
    cwes: ['CWE-20'],
  });
  return {
    title: 'CISA Catalog of Known Exploited Vulnerabilities',
    catalogVersion: '2025.03.10',
    dateReleased: '2025-03-10T15:00:00.000Z',
    count: 4,
    vulnerabilities: [
      item('CVE-2023-48795', 'OpenSSH'),
      item(NEW_LIGHTTPD, 'lighttpd'),
      item('CVE-2098-9999', 'Unknown product'),
      item('CVE-2021-41773', 'HTTP Server'),
    ],
  };
}

const sshPort = (version: string): ScannedPort => ({
  port: 22,
  protocol: 'tcp',
  state: 'open',
  service: 'ssh',
  product: 'OpenSSH',
  version,
  extra_info: 'protocol 2.0',
  cpe: [`cpe:/a:openbsd:openssh:${version}`],
});

let dir: string;
let dataDir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'netwarden-cve-'));
  dataDir = join(dir, 'data');
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function writeJson(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(value));
  return path;
}

describe('detectFeedType', () => {
  it.each<[string, unknown, string | null]>([
    ['an NVD feed', nvdFeed(), 'nvd'],
    ['an NVD API answer without format', { resultsPerPage: 1, vulnerabilities: [nvdCve('CVE-2099-0001', {})] }, 'nvd'],
    ['an empty NVD feed', { format: 'NVD_CVE', version: '2.0', vulnerabilities: [] }, 'nvd'],
    ['a single NVD CVE record', nvdCve('CVE-2099-0001', {}).cve, 'nvd'],
    ['the KEV catalog', kevCatalog(), 'kev'],
    ['a KEV list without header', { vulnerabilities: [{ cveID: 'CVE-2021-44228' }] }, 'kev'],
    ['an NVD 1.1 feed', { CVE_data_type: 'CVE', CVE_Items: [] }, null],
    ['an array', [], null],
    ['something else', { hello: 'world' }, null],
    ['null', null, null],
  ])('%s', (_, json, expected) => {
    expect(detectFeedType(json)).toBe(expected);
  });
});

describe('importNvdFeed', () => {
  it('converts NVD JSON 2.0 records to the dataset format', () => {
    const result = importNvdFeed(nvdFeed());
    expect(result.read).toBe(6);
    expect(result.skipped).toEqual([{ id: REJECTED, reason: 'rejected' }]);
    const rec = result.records.find((r) => r.id === NEW_OPENSSH)!;
    expect(rec).toMatchObject({
      cvss_score: 9.8,
      cvss_vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
      cvss_version: '3.1',
      description: 'A made-up flaw in sshd.',
      kev: false,
      published: '2025-03-01',
      last_modified: '2025-03-05T12:00:00.000',
      affected: [
        { cpe: 'openbsd:openssh', versionStartIncluding: '9.0', versionEndExcluding: '9.9' },
        { cpe: 'openbsd:openssh', version: '8.5p1' },
      ],
      remediation: 'Upgrade OpenSSH to 9.9 or later.',
    });
    expect(rec.references).toEqual([`https://nvd.nist.gov/vuln/detail/${NEW_OPENSSH}`, 'https://example.org/advisory']);
  });

  it('falls back to CVSS v2, keeps OS-only records without products, reads the KEV fields', () => {
    const result = importNvdFeed(nvdFeed());
    expect(result.records.find((r) => r.id === NEW_LIGHTTPD)).toMatchObject({
      cvss_score: 5.0,
      cvss_version: '2.0',
      remediation: 'Upgrade lighttpd to a release newer than 1.4.70.',
    });
    expect(result.records.find((r) => r.id === OS_ONLY)!.affected).toEqual([]);
    expect(result.records.find((r) => r.id === KEV_IN_FEED)).toMatchObject({ kev: true, affected: [{ cpe: 'exim:exim', version: '4.97' }] });
  });

  it('reads NVD\'s "*:p2 up to 7.2" form as up to 7.2p2', () => {
    const feed = {
      format: 'NVD_CVE',
      vulnerabilities: [
        nvdCve('CVE-2099-0010', {
          cpeMatch: [{ vulnerable: true, criteria: 'cpe:2.3:a:openbsd:openssh:*:p2:*:*:*:*:*:*', versionEndIncluding: '7.2' }],
        }),
      ],
    };
    expect(importNvdFeed(feed).records[0].affected).toEqual([{ cpe: 'openbsd:openssh', versionEndIncluding: '7.2p2' }]);
  });

  it('drops affected lines whose versions cannot be read, with a warning', () => {
    const feed = {
      format: 'NVD_CVE',
      vulnerabilities: [
        nvdCve('CVE-2099-0011', { cpeMatch: [{ vulnerable: true, criteria: 'cpe:2.3:a:x:y:*:*:*:*:*:*:*:*', versionEndExcluding: 'next' }] }),
      ],
    };
    const result = importNvdFeed(feed);
    expect(result.records[0].affected).toEqual([]);
    expect(result.warnings).toEqual([expect.stringMatching(/CVE-2099-0011.*not a version/)]);
  });

  it('keeps the score NVD gives even when it differs from our calculation, and skips malformed records', () => {
    const odd = nvdCve('CVE-2099-0012', {
      v31: [7.3, 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:L/A:L'],
      cpeMatch: [{ vulnerable: true, criteria: 'cpe:2.3:a:at\\&t:some_product:1.0:*:*:*:*:*:*:*' }],
    });
    const broken = nvdCve('CVE-2099-0013', {});
    (broken.cve as Record<string, unknown>).published = 'yesterday';
    const result = importNvdFeed({ format: 'NVD_CVE', vulnerabilities: [odd, broken, { cve: { id: 'nonsense' } }] });
    expect(result.records.map((r) => [r.id, r.cvss_score, r.affected])).toEqual([
      ['CVE-2099-0012', 7.3, [{ cpe: 'at&t:some_product', version: '1.0' }]],
    ]);
    expect(result.skipped).toEqual([
      { id: 'CVE-2099-0013', reason: expect.stringMatching(/published/) },
      { id: 'nonsense', reason: 'no valid CVE id' },
    ]);
  });

  it('rejects documents that are not NVD 2.0 feeds with a clear message', () => {
    expect(() => importNvdFeed({ CVE_Items: [] })).toThrow(/NVD 1\.1 feed/);
    expect(() => importNvdFeed(kevCatalog())).toThrow(FeedFormatError);
    expect(() => importNvdFeed({ hello: 1 })).toThrow(/neither an NVD JSON 2\.0 feed .* nor CISA/);
  });
});

describe('importKev', () => {
  it('reads the catalog', () => {
    const result = importKev(kevCatalog());
    expect(result.catalogVersion).toBe('2025.03.10');
    expect(result.entries.size).toBe(4);
    expect(result.entries.get('CVE-2023-48795')).toMatchObject({ date_added: '2025-03-10', due_date: '2025-03-31', product: 'OpenSSH' });
  });

  it('skips malformed entries and rejects other documents', () => {
    const result = importKev({ catalogVersion: '1', vulnerabilities: [{ cveID: 'nope' }, 'x', { cveID: 'CVE-2020-0001' }] });
    expect(result.entries.size).toBe(1);
    expect(result.skipped).toHaveLength(2);
    expect(() => importKev(nvdFeed())).toThrow(/not CISA's KEV catalog/);
  });
});

describe('remediationFor', () => {
  it('names the fixed releases', () => {
    expect(remediationFor([{ cpe: 'apache:http_server', versionEndExcluding: '2.4.60' }])).toBe('Upgrade Apache httpd to 2.4.60 or later.');
    expect(
      remediationFor([
        { cpe: 'samba:samba', versionEndExcluding: '4.13.17' },
        { cpe: 'samba:samba', versionStartIncluding: '4.14.0', versionEndExcluding: '4.14.12' },
      ]),
    ).toBe('Upgrade Samba smbd to a fixed release (4.13.17, 4.14.12 or later in the matching branch).');
    expect(remediationFor([{ cpe: 'acme:some_daemon', version: '1.0' }])).toBe('Upgrade some daemon to a current release that is not affected.');
    expect(remediationFor([])).toBeNull();
  });
});

describe('importCveFiles and the loader', () => {
  it('stores imported data that the matcher uses afterwards', () => {
    const before = matchCves([sshPort('9.8p1')], loadCveDataset(dataDir));
    expect(before.map((m) => m.id)).not.toContain(NEW_OPENSSH);

    const nvd = writeJson('nvdcve-2.0-2099.json', nvdFeed());
    const kev = writeJson('known_exploited_vulnerabilities.json', kevCatalog());
    const summary = importCveFiles([nvd, kev], dataDir, { now: '2025-03-11T00:00:00.000Z' });

    expect(summary.path).toBe(importedFilePath(dataDir));
    const [nvdReport, kevReport] = summary.files;
    expect(nvdReport).toMatchObject({
      file: 'nvdcve-2.0-2099.json',
      kind: 'nvd',
      read: 6,
      added: 3,
      updated: 1,
      unmatchable: 1,
      skipped: 1,
      kevFlagsSet: 1,
    });
    expect(kevReport).toMatchObject({
      file: 'known_exploited_vulnerabilities.json',
      kind: 'kev',
      read: 4,
      kevWithoutRecord: 1,
      catalogVersion: '2025.03.10',
    });
    // Newly flagged: Terrapin (shipped) and the imported lighttpd CVE; Apache 2.4.49 was flagged already.
    expect(kevReport.kevFlagsSet).toBe(2);

    const dataset = loadCveDataset(dataDir);
    const after = matchCves([sshPort('9.8p1')], dataset);
    expect(after.find((m) => m.id === NEW_OPENSSH)).toMatchObject({ confidence: 'confirmed', severity: 'critical', cvss_score: 9.8 });
    // The exact NVD version 8.5 + update p1 matches OpenSSH 8.5p1.
    expect(matchCves([sshPort('8.5p1')], dataset).map((m) => m.id)).toContain(NEW_OPENSSH);

    const terrapin = matchCves([sshPort('9.5p1')], dataset).find((m) => m.id === 'CVE-2023-48795')!;
    expect(terrapin.kev).toBe(true);

    const lighttpd = matchCves([{ ...sshPort('1.4.59'), port: 80, service: 'http', product: 'lighttpd', cpe: [] }], dataset).find(
      (m) => m.id === NEW_LIGHTTPD,
    )!;
    expect(lighttpd).toMatchObject({ kev: true, severity: 'medium', remediation: 'Upgrade lighttpd to a release newer than 1.4.70.' });
  });

  it('merges an imported record over the shipped one by id, keeping curated text', () => {
    importCveFiles([writeJson('feed.json', nvdFeed())], dataDir);
    const shipped = loadShippedCves().find((e) => e.id === 'CVE-2024-6387')!;
    const merged = loadCveDataset(dataDir).find((e) => e.id === 'CVE-2024-6387')!;
    expect(merged.description).toBe(shipped.description);
    expect(merged.remediation).toBe(shipped.remediation);
    expect(merged.references).toEqual(expect.arrayContaining([...shipped.references, 'https://example.org/advisory']));
    expect(merged.affected).toEqual([
      { cpe: 'openbsd:openssh', versionEndExcluding: '4.4' },
      { cpe: 'openbsd:openssh', versionStartIncluding: '8.6', versionEndExcluding: '9.8' },
      { cpe: 'openbsd:openssh', version: '8.5p1' },
    ]);
    // NVD's ranges still give the same answers for real OpenSSH versions.
    const hit = (v: string): boolean => matchCves([sshPort(v)], [merged]).some((m) => m.id === 'CVE-2024-6387');
    expect([hit('8.5p1'), hit('9.7p1'), hit('9.8p1'), hit('4.3p2'), hit('4.4p1'), hit('8.4p1')]).toEqual([true, true, false, true, false, false]);
  });

  it('keeps shipped version-independent entries when NVD lists only operating systems', () => {
    const feed = {
      format: 'NVD_CVE',
      vulnerabilities: [
        nvdCve('CVE-2017-0144', {
          v31: [8.8, 'CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:H'],
          cpeMatch: [{ vulnerable: true, criteria: 'cpe:2.3:o:microsoft:windows_7:-:sp1:*:*:*:*:*:*' }],
        }),
      ],
    };
    const summary = importCveFiles([writeJson('eternal.json', feed)], dataDir);
    expect(summary.files[0]).toMatchObject({ added: 0, updated: 1, unmatchable: 0 });
    const dataset = loadCveDataset(dataDir);
    const smb: ScannedPort = {
      port: 445,
      protocol: 'tcp',
      state: 'open',
      service: 'microsoft-ds',
      product: 'Microsoft Windows 7 - 10 microsoft-ds',
      version: null,
      extra_info: null,
      cpe: ['cpe:/o:microsoft:windows'],
    };
    expect(matchCves([smb], dataset).find((m) => m.id === 'CVE-2017-0144')).toMatchObject({ cvss_score: 8.8, confidence: 'likely', kev: true });
  });

  it('counts a second import of the same feed as updates, and an older feed does not undo a newer one', () => {
    importCveFiles([writeJson('a.json', nvdFeed())], dataDir);
    const again = importCveFiles([writeJson('b.json', nvdFeed())], dataDir);
    expect(again.files[0]).toMatchObject({ added: 0, updated: 4 });
    const older = nvdFeed();
    const oldRecord = nvdCve(NEW_OPENSSH, {
      lastModified: '2020-01-01T00:00:00.000',
      v31: [5.3, 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:N/A:N'],
      cpeMatch: [{ vulnerable: true, criteria: 'cpe:2.3:a:openbsd:openssh:1.0:*:*:*:*:*:*:*' }],
    });
    older.vulnerabilities = [oldRecord];
    importCveFiles([writeJson('old.json', older)], dataDir);
    expect(readImportedFile(dataDir)!.cves.find((e) => e.id === NEW_OPENSSH)!.cvss_score).toBe(9.8);
  });

  it('accepts gzip-compressed feeds', () => {
    const path = join(dir, 'nvdcve-2.0-2099.json.gz');
    writeFileSync(path, gzipSync(JSON.stringify(nvdFeed())));
    expect(importCveFiles([path], dataDir).files[0]).toMatchObject({ kind: 'nvd', added: 3 });
  });

  it('writes nothing when one of the files is neither kind, and says which', () => {
    const good = writeJson('nvd.json', nvdFeed());
    const bad = writeJson('random.json', { hello: 'world' });
    expect(() => importCveFiles([good, bad], dataDir)).toThrow(FeedFormatError);
    expect(() => importCveFiles([good, bad], dataDir)).toThrow(/random\.json: neither an NVD JSON 2\.0 feed/);
    expect(readImportedFile(dataDir)).toBeNull();
    const notJson = join(dir, 'broken.json');
    writeFileSync(notJson, '{"vulnerabilities": [');
    expect(() => importCveFiles([notJson], dataDir)).toThrow(/broken\.json: not JSON/);
    expect(() => importCveFiles([join(dir, 'missing.json')], dataDir)).toThrow(/missing\.json: cannot read: ENOENT/);
    expect(() => importCveFiles([writeJson('old.json', { CVE_Items: [] })], dataDir)).toThrow(/retired NVD 1\.1 feed/);
  });

  it('leaves out invalid records of the imported file and says so', () => {
    importCveFiles([writeJson('feed.json', nvdFeed())], dataDir);
    const file = JSON.parse(readFileSync(importedFilePath(dataDir), 'utf8'));
    file.cves[0].affected = [{ cpe: 'openbsd:openssh', versionEndExcluding: 'soon' }];
    writeFileSync(importedFilePath(dataDir), JSON.stringify(file));
    const problems: string[] = [];
    const read = readImportedFile(dataDir, (p) => problems.push(p))!;
    expect(read.cves).toHaveLength(file.cves.length - 1);
    expect(problems).toEqual([expect.stringMatching(/record left out: .*not a version/)]);
    const db = new CveDatabase(dataDir);
    expect(db.index().entries.has(file.cves[1].id)).toBe(true);
    expect(db.lastError).toMatch(/1 imported record\(s\) left out/);
  });

  it('refuses a damaged imported file instead of silently ignoring it', () => {
    importCveFiles([writeJson('feed.json', nvdFeed())], dataDir);
    writeFileSync(importedFilePath(dataDir), '{"format":"something else"}');
    expect(() => readImportedFile(dataDir)).toThrow(/not a Netwarden CVE import file/);
  });

  it('CveDatabase picks up an import made by another process without a restart', () => {
    const db = new CveDatabase(dataDir);
    const first = db.index();
    expect(first.entries.has(NEW_OPENSSH)).toBe(false);
    expect(db.index()).toBe(first);
    importCveFiles([writeJson('feed.json', nvdFeed())], dataDir);
    utimesSync(importedFilePath(dataDir), new Date(), new Date(Date.now() + 5000));
    const second = db.index();
    expect(second).not.toBe(first);
    expect(second.entries.has(NEW_OPENSSH)).toBe(true);
    expect(matchCves([sshPort('9.8p1')], second).map((m) => m.id)).toContain(NEW_OPENSSH);
    // A damaged file later keeps the last good data in use and says why.
    writeFileSync(importedFilePath(dataDir), 'garbage');
    utimesSync(importedFilePath(dataDir), new Date(), new Date(Date.now() + 10000));
    expect(db.index()).toBe(second);
    expect(db.lastError).toMatch(/imported\.json/);
  });

  it('mergeCveData applies KEV entries and fills a missing remediation from the required action', () => {
    const file = emptyImportedFile();
    file.cves.push({
      id: 'CVE-2099-0100',
      cvss_score: 7.5,
      cvss_vector: null,
      cvss_version: null,
      description: 'x',
      remediation: null,
      references: [],
      kev: false,
      affected: [{ cpe: 'exim:exim', version: '4.97' }],
    });
    file.kev['CVE-2099-0100'] = {
      date_added: '2025-01-01',
      due_date: '2025-01-22',
      required_action: 'Apply updates per vendor instructions.',
      vendor_project: 'Exim',
      product: 'Exim',
      vulnerability_name: null,
      known_ransomware_campaign_use: null,
    };
    const merged = mergeCveData([], file);
    expect(merged[0]).toMatchObject({
      kev: true,
      remediation: 'Apply updates per vendor instructions. (CISA due date for US federal agencies: 2025-01-22.)',
    });
  });
});

describe('netwarden cve import (command)', () => {
  let out: string[];
  let err: string[];
  const env = { ...process.env };
  beforeEach(() => {
    out = [];
    err = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out.push(String(chunk));
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      err.push(String(chunk));
      return true;
    });
    process.env.NETWARDEN_DATA_DIR = dataDir;
    delete process.env.NETWARDEN_CONFIG;
    process.exitCode = undefined;
  });
  afterEach(() => {
    vi.restoreAllMocks();
    process.env = { ...env };
    process.exitCode = undefined;
  });

  async function run(...args: string[]): Promise<void> {
    const program = new Command().exitOverride();
    registerCveCommand(program);
    await program.parseAsync(['node', 'netwarden', 'cve', ...args]);
  }

  it('imports files, prints counts, and status shows the result', async () => {
    await run('import', writeJson('nvdcve-2.0-2099.json', nvdFeed()), writeJson('known_exploited_vulnerabilities.json', kevCatalog()));
    expect(process.exitCode).toBeUndefined();
    const text = out.join('');
    expect(text).toMatch(
      /nvdcve-2\.0-2099\.json: NVD feed, 6 CVE records: 3 added, 1 updated, 1 without an application CPE \(not matchable, left out\), 1 skipped \(rejected or malformed\), 1 KEV flag set/,
    );
    expect(text).toMatch(
      /known_exploited_vulnerabilities\.json: CISA KEV catalog 2025\.03\.10, 4 entries: KEV flag set on 2 CVEs, 1 for CVEs not in the dataset/,
    );
    expect(text).toMatch(/Total: 3 added, 1 updated, 3 KEV flags set\./);
    expect(JSON.parse(readFileSync(importedFilePath(dataDir), 'utf8')).cves.length).toBe(4);

    out.length = 0;
    await run('status');
    expect(out.join('')).toMatch(/Shipped dataset: \d+ CVEs \(.*OpenSSH \d+/);
    expect(out.join('')).toMatch(/Imported: 4 CVE records, 4 KEV entries/);
  });

  it('fails with a clear message and exit status 1 for a file that is neither kind', async () => {
    await run('import', writeJson('photo.json', { pixels: [] }));
    expect(process.exitCode).toBe(1);
    expect(err.join('')).toMatch(
      /^netwarden: .*photo\.json: neither an NVD JSON 2\.0 feed .* nor CISA's known_exploited_vulnerabilities\.json .*; nothing was imported\n$/,
    );
    expect(readImportedFile(dataDir)).toBeNull();
  });
});
