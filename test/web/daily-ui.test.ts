/// <reference lib="dom" />
/**
 * The daily loop in Chromium against the real server (issue 23 §1, §3, §4, §5; CONTRACT §17, §18),
 * with devices from a real recorded nmap report (test/fixtures/nmap-import/loopback-sv-1.xml:
 * 127.0.0.20 with every port closed, OpenSSH 7.4 and Apache 2.4.49 on 127.0.0.21, vsftpd 2.3.4 and
 * nginx 1.18.0 on 127.0.0.22, and 127.0.0.23) imported over the API, so all four are new:
 * - the device list marks them new and says in a few words why each is at risk;
 * - the dashboard's "New devices" inbox names, zones, trusts and acknowledges one, archives one,
 *   deletes one and acknowledges the rest;
 * - the device page's status card archives and restores, watches, and sets "can sleep"; its
 *   findings and CVEs are grouped by product, the unexploited ones collapsed; the score explained;
 * - the zone policy editor takes the suggested policy, shows a mistake under its field, saves;
 * - Fix first says which version fixes a product's CVEs;
 * - every page fits 390 px and 1440 px without sideways scrolling, in both themes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserSkipReason, openUi, type UiBrowser } from '../helpers/browser.js';
import { testDatabases } from '../helpers/databases.js';
import { adminWithKey, readJson, startTestServer, type TestServer } from '../helpers/server.js';

const skipReason = browserSkipReason();
/** What expect.poll waits at most: the page and the server share a busy machine. */
const POLL = { timeout: 15_000 };
const REPORT = join(import.meta.dirname, '..', 'fixtures', 'nmap-import', 'loopback-sv-1.xml');

describe.skipIf(skipReason !== null).sequential('web UI: new devices, device status, policies, fix first wording', () => {
  let server: TestServer;
  let browser: UiBrowser;
  let page: Page;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer(testDatabases()[0]);
    const admin = await adminWithKey(server);
    key = admin.key;
    const res = await server.request('/api/scans/import', {
      method: 'POST',
      body: readFileSync(REPORT, 'utf8'),
      headers: { 'Content-Type': 'application/xml' },
      key,
    });
    expect(res.status, await res.clone().text()).toBe(201);
    browser = await openUi(server.baseUrl, admin.cookie);
    page = browser.page;
    await page.setViewportSize({ width: 1440, height: 900 });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const get = async (path: string): Promise<any> => {
    const res = await server.request(path, { key });
    expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    return readJson(res);
  };
  const deviceAt = async (ip: string, status = 'new'): Promise<any> =>
    (await get(`/api/devices?limit=1000&status=${status}`)).find((d: any) => d.ip_address === ip);
  const noSidewaysScroll = async (what: string) => {
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, what).toBeLessThanOrEqual(1);
  };

  it('the device list marks new devices and says briefly why each is at risk', async () => {
    const listed: any[] = await get('/api/devices?limit=1000&with_reasons=true');
    expect(listed.map((d) => d.status)).toEqual(['new', 'new', 'new', 'new']);
    expect((await get('/api/devices?limit=1')).every((d: any) => !('risk_reason' in d))).toBe(true);
    const web = listed.find((d) => d.ip_address === '127.0.0.21');
    expect(web.risk_reason).toMatch(/\d+ CVEs?/);
    expect(listed.find((d) => d.ip_address === '127.0.0.20').risk_reason).toBeNull();
    await page.goto(browser.url('/devices'));
    const row = page.locator('tr', { has: page.getByRole('link', { name: '127.0.0.21', exact: true }) });
    await expect.poll(() => row.locator('.badge.new').count(), POLL).toBe(1);
    expect(await row.locator('.risk-reason').textContent()).toBe(web.risk_reason);
    // A device without findings says so in two words; which ports that covers is in the badge's title, not the row.
    const quiet = page.locator('tr', { has: page.getByRole('link', { name: '127.0.0.20', exact: true }) }).locator('.badge.risk-none');
    expect(await quiet.textContent()).toBe('No finding');
    expect(await quiet.getAttribute('title')).toMatch(/^No risk found in ports? .*, examined /);
    await browser.screenshot('devices-reasons');
  });

  it('the dashboard inbox names, zones, trusts and acknowledges one, archives one, deletes one and acknowledges the rest', async () => {
    await page.goto(browser.url('/'));
    const inbox = page.getByRole('region', { name: 'New devices' });
    await expect.poll(() => inbox.getByRole('heading', { level: 2 }).textContent(), POLL).toBe('New devices (4)');
    await browser.screenshot('dashboard-inbox');
    // On a wide screen each device's decisions are one row: name, zone, trust and the buttons side by side.
    const rows = await inbox.locator('form.inbox-form').evaluateAll((forms) =>
      forms.map((f) => {
        const name = f.querySelector('input')!.getBoundingClientRect();
        const button = f.querySelector('button')!.getBoundingClientRect();
        return { overlap: Math.min(name.bottom, button.bottom) - Math.max(name.top, button.top), height: f.getBoundingClientRect().height };
      }),
    );
    expect(rows).toHaveLength(4);
    for (const row of rows) expect(row.overlap, JSON.stringify(row)).toBeGreaterThan(0);

    const web = inbox.getByRole('form', { name: 'Decide about 127.0.0.21' });
    await web.getByLabel('Name').fill('Web box');
    await web.getByLabel('Zone').selectOption('Servers');
    await web.getByLabel('Trusted').check();
    await web.getByRole('button', { name: 'Acknowledge 127.0.0.21' }).click();
    await inbox.getByText('Acknowledged Web box.').waitFor();
    expect(await deviceAt('127.0.0.21', 'known')).toMatchObject({ label: 'Web box', zone: 'Servers', is_trusted: true, status: 'known' });

    await inbox.getByRole('button', { name: 'Archive 127.0.0.20' }).click();
    await inbox.getByText(/^Archived 127\.0\.0\.20/).waitFor();
    expect((await deviceAt('127.0.0.20', 'archived')).status).toBe('archived');

    await inbox.getByRole('button', { name: 'Delete 127.0.0.23' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete device' });
    await dialog.getByRole('button', { name: 'Delete device' }).click();
    await inbox.getByText('Deleted 127.0.0.23.').waitFor();
    expect(await get('/api/devices?limit=1000&q=127.0.0.23')).toEqual([]);

    await expect.poll(() => inbox.getByRole('heading', { level: 2 }).textContent(), POLL).toBe('New devices (1)');
    await inbox.getByRole('button', { name: 'Acknowledge', exact: true }).click();
    await inbox.getByText('Acknowledged 1 new device.').waitFor();
    await inbox.getByText('No new devices.').waitFor();
    expect((await deviceAt('127.0.0.22', 'known')).status).toBe('known');
    const audit: any[] = await get('/api/audit-logs?action=device_acknowledged&limit=100');
    expect(audit).toHaveLength(2);
  }, 60_000);

  it('the device page archives and restores, watches, sets "can sleep", and groups findings and CVEs by product', async () => {
    const summary = await deviceAt('127.0.0.21', 'known');
    const detail = await get(`/api/devices/${summary.id}`);
    await page.goto(browser.url(`/devices/${summary.id}`));
    const status = page.getByRole('region', { name: 'Status and watching' });
    await status.getByRole('button', { name: 'Archive' }).click();
    await status.getByText('Archived: left out of lists, stats and alerts').waitFor();
    expect((await get(`/api/devices/${summary.id}`)).status).toBe('archived');
    await status.getByRole('button', { name: 'Restore (known)' }).click();
    await status.getByText('Known', { exact: true }).waitFor();
    // A click, not check(): the box shows the saved state, which arrives with the PUT's answer.
    await status.getByLabel('goes offline').click();
    await expect.poll(async () => (await get(`/api/devices/${summary.id}`)).watch, POLL).toEqual({ offline: true, online: false });
    await status.getByLabel('Can sleep').selectOption('3');
    await expect.poll(async () => (await get(`/api/devices/${summary.id}`)).presence, POLL).toEqual({ offline_after_scans: 3 });

    // Findings: CVEs grouped by the software on their port, known exploited first, the rest collapsed.
    const cveFindings = detail.risk_details.findings.filter((f: any) => f.kind === 'cve');
    expect(cveFindings.length).toBeGreaterThan(1);
    const findings = page.locator('#findings');
    const groups = findings.locator('.product-group');
    const ports = new Set(cveFindings.map((f: any) => f.port));
    expect(await groups.count()).toBe(ports.size);
    const exploited = detail.cves.filter((c: any) => c.kev).length;
    // Shown per group: its known exploited CVEs, and its worst one (the API's first) when that is not among them.
    const kev = (f: any) => detail.cves.some((c: any) => c.id === f.cve_ids[0] && c.port === f.port && c.kev);
    const shownPerGroup = await groups.evaluateAll((els) => els.map((el) => el.querySelectorAll(':scope > ul > li').length));
    expect(shownPerGroup.reduce((x, y) => x + y, 0)).toBe(
      [...ports].reduce((sum: number, port) => {
        const list = cveFindings.filter((f: any) => f.port === port);
        return sum + list.filter(kev).length + (kev(list[0]) ? 0 : 1);
      }, 0),
    );
    // Collapsed: fewer findings visible than the device has, and "N more CVEs" opens the rest.
    const visible = () => findings.locator('li:visible').count();
    const before = await visible();
    expect(before).toBeLessThan(detail.risk_details.findings.length);
    const more = findings.locator('details.product-more').first();
    await more.locator('summary').click();
    await expect.poll(visible, POLL).toBeGreaterThan(before);
    // The same in the CVE card.
    const cveCard = page.locator('#cves');
    expect(await cveCard.locator('.product-group').count()).toBeGreaterThan(0);
    expect(await cveCard.locator('li:visible').count()).toBeLessThan(detail.cves.length);
    if (exploited > 0) expect(await cveCard.locator('.product-group').first().locator('.badge.kev').count()).toBeGreaterThan(0);
    // Recommendations show their commands as code; the score is explained.
    if (detail.risk_details.findings.some((f: any) => f.recommendation.includes('`'))) {
      expect(await page.locator('.recommendation code').count()).toBeGreaterThan(0);
    }
    const explained = page.locator('details.score-explained');
    await explained.locator('summary').click();
    expect(await explained.textContent()).toContain(`How the score of ${detail.risk_details.score} comes about`);
    expect(await explained.locator('li').first().textContent()).toMatch(/^\+\d+ /);
    await browser.screenshot('device-grouped');
  }, 60_000);

  it('shows the commands and settings in recommendations as code, without their backticks', async () => {
    // vsftpd on 127.0.0.22: the FTP rule's recommendation names a setting between backticks.
    const ftp = await deviceAt('127.0.0.22', 'known');
    const detail = await get(`/api/devices/${ftp.id}`);
    const finding = detail.risk_details.findings.find((f: any) => /`[^`]+`/.test(f.recommendation));
    expect(finding, 'a finding whose recommendation has code').toBeDefined();
    const code = [...finding.recommendation.matchAll(/`([^`]+)`/g)].map((m: RegExpMatchArray) => m[1]);
    await page.goto(browser.url(`/devices/${ftp.id}`));
    const shown = page.locator('#findings .recommendation', { hasText: code[0] }).first();
    await expect.poll(() => shown.locator('code').allTextContents(), POLL).toEqual(code);
    expect(await shown.textContent()).not.toContain('`');
  });

  it('the zone policy editor takes the suggested policy, shows a mistake under its field and saves', async () => {
    await page.goto(browser.url('/'));
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Policies' }).click();
    const iot = page.getByRole('region', { name: 'IoT policy' });
    await iot.getByRole('button', { name: 'Use suggested' }).click();
    expect(await iot.getByLabel('Forbidden ports').inputValue()).toContain('23');
    const guest = page.getByRole('region', { name: 'Guest policy' });
    await guest.getByLabel('Enforce a policy in Guest').check();
    await guest.getByLabel('Forbidden ports').fill('23, telnet');
    await guest.getByLabel('Severity of a breach').selectOption('critical');
    await page.getByRole('button', { name: 'Save policies' }).click();
    const error = guest.locator('.field-error');
    await expect.poll(() => error.textContent(), POLL).toContain('“telnet” is not a port');
    expect(await guest.getByLabel('Forbidden ports').getAttribute('aria-invalid')).toBe('true');
    expect(await get('/api/policies')).toEqual({});
    await guest.getByLabel('Forbidden ports').fill('23, 161/udp');
    await guest.getByLabel('Forbidden services').fill('telnet');
    await page.getByRole('button', { name: 'Save policies' }).click();
    await page.getByText('Policies saved.').waitFor();
    const saved = await get('/api/policies');
    expect(Object.keys(saved).sort()).toEqual(['Guest', 'IoT']);
    expect(saved.Guest).toEqual({ forbidden_ports: [23, '161/udp'], forbidden_services: ['telnet'], allowed_ports: null, severity: 'critical' });
    expect(saved.IoT).toEqual((await get('/api/policies/suggested')).IoT);
    await browser.screenshot('policies');
  }, 60_000);

  it('Fix first says which version fixes a product’s CVEs, and how sure the detection is', async () => {
    const findings: any[] = await get('/api/findings?order=priority&limit=1000');
    const cves = findings.filter((f) => f.kind === 'cve');
    expect(cves.length).toBeGreaterThan(0);
    for (const f of cves) {
      expect(f.confidence).toMatch(/^(confirmed|likely)$/);
      expect(typeof f.confidence_reason).toBe('string');
    }
    for (const f of findings.filter((x) => x.kind !== 'cve')) expect([f.confidence, f.fixed_in]).toEqual([null, null]);
    // The shipped data bounds most OpenSSH CVEs by the version that fixes them (`versionEndExcluding`);
    // Apache's CVE-2021-41773 names the affected version only, so its fix is not stated.
    expect(cves.some((f) => f.product_name === 'OpenSSH' && f.fixed_in !== null)).toBe(true);
    expect(cves.find((f) => f.cve_id === 'CVE-2021-41773')).toMatchObject({ product_name: 'Apache httpd', fixed_in: null, confidence: 'confirmed' });
    await page.goto(browser.url('/fix-first'));
    const headings = page.locator('.fix-group h2');
    await expect.poll(() => headings.count(), POLL).toBeGreaterThan(0);
    const texts = await headings.allTextContents();
    const byProduct = new Map<string, any[]>();
    for (const f of cves) byProduct.set(f.product_name, [...(byProduct.get(f.product_name) ?? []), f]);
    for (const [product, list] of byProduct) {
      const ids = new Set(list.map((f) => f.cve_id));
      const heading = texts.find((t) => t.startsWith(`Upgrade ${product}`));
      expect(heading, product).toBeDefined();
      expect(heading).toContain(`${ids.size} CVE${ids.size === 1 ? '' : 's'}`);
      if (list.every((f) => f.fixed_in))
        expect(heading).toMatch(new RegExp(`^Upgrade ${product.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} to \\S+: fixes `));
    }
    // Where the data names no fixed version for some, the group says what is known: which version fixes how many.
    for (const [product, list] of byProduct) {
      const fixed = list.filter((f) => f.fixed_in);
      if (fixed.length === list.length) continue;
      const group = page.locator('.fix-group', { has: page.locator('h2', { hasText: new RegExp(`^Upgrade ${product}: `) }) });
      const note = (await group.locator('.fix-note').first().textContent()) ?? '';
      if (fixed.length === 0) expect(note).toMatch(/names no fixed version/);
      else
        expect(note).toMatch(
          new RegExp(`^\\S+ fixes ${new Set(fixed.map((f) => f.cve_id)).size} of the ${new Set(list.map((f) => f.cve_id)).size};`),
        );
    }
    await browser.screenshot('fix-first-versions');
  }, 60_000);

  it('fits 390 px and 1440 px without sideways scrolling, in both themes', async () => {
    const web = await deviceAt('127.0.0.21', 'known');
    for (const width of [390, 1440]) {
      await page.setViewportSize({ width, height: 900 });
      for (const theme of ['light', 'dark']) {
        await page.evaluate((t) => localStorage.setItem('netwarden-theme', t), theme);
        for (const path of ['/', '/devices', `/devices/${web.id}`, '/policies']) {
          await page.goto(browser.url(path));
          await page.locator('h1').first().waitFor();
          await page.locator('.card, table').first().waitFor();
          expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(theme);
          await noSidewaysScroll(`${path} at ${width} px, ${theme}`);
          // Every page's link stays in sight: a navigation row too long for the screen wraps.
          const hidden = await page
            .getByRole('navigation', { name: 'Main' })
            .locator('a')
            .evaluateAll((links) =>
              links.filter((a) => a.getBoundingClientRect().right > a.parentElement!.getBoundingClientRect().right + 1).map((a) => a.textContent),
            );
          expect(hidden, `${path} at ${width} px`).toEqual([]);
          if (width === 390) await browser.screenshot(`phone${path.replace(/\//g, '-')}-daily-${theme}`);
        }
      }
    }
    await page.setViewportSize({ width: 1440, height: 900 });
  }, 120_000);

  it('ran without page errors or Content-Security-Policy violations', () => {
    expect(browser.errors).toEqual([]);
  });
});
