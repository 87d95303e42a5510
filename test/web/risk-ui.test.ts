/// <reference lib="dom" />
/**
 * Fix first, accepting risk and the Accepted page in Chromium against the real server (issue 23,
 * CONTRACT §17, §18), with findings from a real recorded nmap report
 * (test/fixtures/nmap-import/loopback-sv-1.xml: OpenSSH 7.4 and Apache 2.4.49 on 127.0.0.21,
 * vsftpd 2.3.4 and nginx 1.18.0 on 127.0.0.22) imported over the API: Fix first lists the findings
 * grouped by product; a finding is accepted from its device's page (reason, expiry), shows there as
 * accepted and on the Accepted page, and is removed there; every page fits a phone in both themes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserSkipReason, openUi, type UiBrowser } from '../helpers/browser.js';
import { testDatabases } from '../helpers/databases.js';
import { adminWithKey, readJson, startTestServer, type TestServer } from '../helpers/server.js';

const skipReason = browserSkipReason();
const REPORT = join(import.meta.dirname, '..', 'fixtures', 'nmap-import', 'loopback-sv-1.xml');

describe.skipIf(skipReason !== null).sequential('web UI: fix first and accepted risk', () => {
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
  const noSidewaysScroll = async (what: string) => {
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, what).toBeLessThanOrEqual(1);
  };

  it('lists open findings fix first, grouped by product, known exploited first', async () => {
    const findings: any[] = await get('/api/findings?order=priority&limit=1000');
    expect(findings.length).toBeGreaterThan(0);
    const top = findings[0];
    await page.goto(browser.url('/'));
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Fix first' }).click();
    await expect.poll(() => page.url()).toContain('/fix-first');
    const groups = page.locator('.fix-group');
    await expect.poll(() => groups.count(), { timeout: 15_000 }).toBeGreaterThan(0);
    // The most urgent finding's group comes first, headed by its product.
    const first = groups.first();
    const heading = await first.locator('h2').textContent();
    // Grouped by the software without its version; the heading names the version that fixes all, where the CVE data gives one for each.
    if (top.product_name) expect(heading).toContain(top.product_name);
    const cveFindings = findings.filter((f) => f.product_name === top.product_name && f.cve_id);
    if (top.product_name && cveFindings.length > 0) {
      const devices = new Set(findings.filter((f) => f.product_name === top.product_name).map((f) => f.device_id)).size;
      const cves = new Set(cveFindings.map((f) => f.cve_id)).size;
      const fixes = cveFindings.map((f) => f.fixed_in);
      const collator = new Intl.Collator('en', { numeric: true });
      const fixedIn = fixes.every(Boolean) ? fixes.reduce((x, y) => (collator.compare(y, x) > 0 ? y : x)) : null;
      const counted = `${cves} CVE${cves === 1 ? '' : 's'} on ${devices} device${devices === 1 ? '' : 's'}`;
      expect(heading).toBe(fixedIn ? `Upgrade ${top.product_name} to ${fixedIn}: fixes ${counted}` : `Upgrade ${top.product_name}: ${counted}`);
    }
    expect(await first.textContent()).toContain(top.cve_id ?? top.title);
    if (top.kev) expect(await first.locator('.badge.kev').count()).toBeGreaterThan(0);
    // Every finding of the inventory is listed once; beyond five, a group keeps the rest behind "N more findings".
    expect(await page.locator('.fix-finding').count()).toBe(findings.length);
    const sameProduct = findings.filter((f) => f.product_name === top.product_name).length;
    if (top.product_name && sameProduct > 5) {
      expect(await first.locator('.fix-finding:visible').count()).toBe(5);
      await first.getByText(`${sameProduct - 5} more finding${sameProduct - 5 === 1 ? '' : 's'}`).click();
      await expect.poll(() => first.locator('.fix-finding:visible').count()).toBe(sameProduct);
    }
    await browser.screenshot('fix-first');
  }, 60_000);

  it('accepts a finding from its device page, shows it accepted and on Accepted, and removes it there', async () => {
    const devices: any[] = await get('/api/devices?limit=1000');
    const ssh = devices.find((d) => d.ip_address === '127.0.0.21');
    const detail = await get(`/api/devices/${ssh.id}`);
    const finding = detail.risk_details.findings[0];
    expect(finding.acceptance).toBeNull();
    const before: any[] = await get('/api/findings?order=priority&limit=1000');
    expect(before.some((f) => f.device_id === ssh.id && f.finding_key === finding.finding_key)).toBe(true);

    await page.goto(browser.url(`/devices/${ssh.id}`));
    const card = page.locator('#findings');
    await card
      .getByRole('button', { name: `Accept ${finding.title}` })
      .first()
      .click();
    const dialog = page.getByRole('dialog', { name: 'Accept risk' });
    await dialog.getByLabel('Reason').fill('Lab box, replaced next quarter');
    const until = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
    await dialog.getByLabel('Expires on (optional)').fill(until);
    await dialog.getByRole('button', { name: 'Accept risk' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);

    const acceptances: any[] = await get('/api/acceptances');
    expect(acceptances).toHaveLength(1);
    expect(acceptances[0]).toMatchObject({ device_id: ssh.id, finding_key: finding.finding_key, reason: 'Lab box, replaced next quarter' });
    expect(acceptances[0].expires_at.slice(0, 10)).toBe(until);
    const note = card.locator('.acceptance-note');
    await expect.poll(() => note.first().textContent(), { timeout: 15_000 }).toContain(`Accepted by ${acceptances[0].by}`);
    expect(await note.first().textContent()).toContain('Lab box, replaced next quarter');
    expect(await card.locator('.badge.accepted').count()).toBe(1);
    await browser.screenshot('device-accepted-finding');

    // Left out of Fix first while accepted.
    await page.goto(browser.url('/fix-first'));
    await expect.poll(() => page.locator('.fix-finding').count(), { timeout: 15_000 }).toBe(before.length - 1);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Accepted' }).click();
    const item = page.locator('.acceptance');
    await expect.poll(() => item.count(), { timeout: 15_000 }).toBe(1);
    const text = await item.textContent();
    expect(text).toContain('Lab box, replaced next quarter');
    expect(text).toContain(acceptances[0].by);
    expect(text).toContain('Until');
    expect(text).toContain(finding.title);
    await browser.screenshot('accepted');

    // Phone width, both themes, with an acceptance on screen.
    await page.setViewportSize({ width: 390, height: 844 });
    for (const theme of ['light', 'dark']) {
      await page.evaluate((t) => localStorage.setItem('netwarden-theme', t), theme);
      for (const path of ['/accepted', '/fix-first', `/devices/${ssh.id}`]) {
        await page.goto(browser.url(path));
        await page.locator('.acceptance, .fix-finding, #findings li').first().waitFor();
        expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(theme);
        await noSidewaysScroll(`${path}, ${theme}`);
        await browser.screenshot(`phone${path.replace(/\//g, '-')}-${theme}`);
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 });

    await page.goto(browser.url('/accepted'));
    await item.getByRole('button', { name: /^Remove acceptance of / }).click();
    await page.getByRole('dialog', { name: 'Remove acceptance' }).getByRole('button', { name: 'Remove acceptance' }).click();
    await page.getByText('No accepted risk').waitFor();
    expect(await get('/api/acceptances')).toEqual([]);
    const after = await get(`/api/devices/${ssh.id}`);
    expect(after.risk_details.findings.every((f: any) => f.acceptance === null)).toBe(true);
    expect(after.risk_level).toBe(detail.risk_level);

    // Fix first lists it again.
    await page.goto(browser.url('/fix-first'));
    await expect.poll(() => page.locator('.fix-finding').count(), { timeout: 15_000 }).toBe(before.length);
  }, 120_000);

  it('marks the CVEs of a version read from a distribution banner "Likely", saying why', async () => {
    // OpenSSH packaged by Debian on another host, as nmap -sV reports it: the banner's version a back-port does not change.
    const ip = '127.0.0.42';
    const report = readFileSync(REPORT, 'utf8')
      .replace(/<host [\s\S]*<\/host>/, (hosts) => hosts.split('</host>').find((h) => h.includes('127.0.0.21'))! + '</host>')
      .replaceAll('127.0.0.21', ip)
      .replaceAll('127.0.0.20/30', `${ip}/32`)
      .replace('version="7.4" extrainfo="protocol 2.0"', 'version="7.4p1 Debian 10+deb9u7" extrainfo="protocol 2.0"');
    const res = await server.request('/api/scans/import', { method: 'POST', body: report, headers: { 'Content-Type': 'application/xml' }, key });
    expect(res.status, await res.clone().text()).toBe(201);
    const findings: any[] = await get('/api/findings?order=priority&limit=1000');
    const openssh = findings.filter((f) => f.product_name === 'OpenSSH');
    const likely = openssh.filter((f) => f.confidence === 'likely');
    expect(likely.length).toBeGreaterThan(0);
    expect(likely.every((f) => f.device_ip === ip)).toBe(true);

    await page.goto(browser.url('/fix-first'));
    const group = page.locator('.fix-group', { has: page.locator('h2', { hasText: /^Upgrade OpenSSH/ }) });
    await expect.poll(() => group.count(), { timeout: 15_000 }).toBe(1);
    expect(await group.locator('.fix-note').allTextContents()).toContain(
      `${likely.length} of ${openssh.length} detected with likely confidence: the version came only from the service's banner, and distribution packages back-port fixes without changing it.`,
    );
    await group.getByText(/^\d+ more findings?$/).click();
    const badges = group.locator('.badge.confidence');
    await expect.poll(() => badges.count()).toBe(likely.length);
    expect(await badges.first().textContent()).toBe('Likely');
    expect(await badges.first().getAttribute('title')).toMatch(/banner.*Debian/);
    await browser.screenshot('fix-first-likely');
  }, 60_000);

  it('ran without page errors or Content-Security-Policy violations', () => {
    expect(browser.errors).toEqual([]);
  });
});
