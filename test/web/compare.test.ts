/// <reference lib="dom" />
/**
 * The Compare page and the device timeline strip in Chromium against the real server (issue 22
 * §1, §4): two real nmap reports imported over the API; the page defaults to the latest two scans,
 * shows the counts and the devices grouped, each expandable; the scan history links to it; the
 * device page shows the presence strip with its change marks; both fit a phone in both themes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { testDatabases } from '../helpers/databases.js';
import { adminWithKey, readJson, startTestServer, type TestServer } from '../helpers/server.js';
import { browserSkipReason, openUi, type UiBrowser } from '../helpers/browser.js';
import { FIRST, MAC, SECOND } from '../helpers/compare-reports.js';

const skipReason = browserSkipReason();

describe.skipIf(skipReason !== null).sequential('web UI: comparing scans and device timelines', () => {
  let server: TestServer;
  let browser: UiBrowser;
  let page: Page;
  let key: string;
  const scanIds: number[] = [];

  beforeAll(async () => {
    server = await startTestServer(testDatabases()[0]);
    const admin = await adminWithKey(server);
    key = admin.key;
    for (const xml of [FIRST, SECOND]) {
      const res = await server.request('/api/scans/import', { method: 'POST', body: xml, headers: { 'Content-Type': 'application/xml' }, key });
      expect(res.status).toBe(201);
      scanIds.push((await readJson(res)).scan_id);
    }
    browser = await openUi(server.baseUrl, admin.cookie);
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const noSidewaysScroll = async (what: string) => {
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, what).toBeLessThanOrEqual(1);
  };
  /** Nor does a table inside `selector` scroll sideways within its card. */
  const noSidewaysScrollInside = async (selector: string, what: string) => {
    const wraps = await page.locator(`${selector} .table-wrap`).evaluateAll((els) => els.map((el) => el.scrollWidth - el.clientWidth));
    expect(wraps.length, `${what}: ${selector} has a table`).toBeGreaterThan(0);
    for (const overflow of wraps) expect(overflow, what).toBeLessThanOrEqual(1);
  };

  it('compares the latest two scans by default: counts, then devices grouped and expandable', async () => {
    await page.goto(browser.url('/compare'));
    const summary = page.getByRole('region', { name: 'Comparison summary' });
    await expect.poll(() => summary.textContent(), { timeout: 15_000 }).toContain(`#${scanIds[0]}`);
    const counts = await summary.locator('.compare-counts > div').allTextContents();
    expect(counts).toEqual(['Added1', 'Removed1', 'Moved1', 'Changed2', 'Ports opened2', 'Ports closed1', 'Services changed1', 'Risk changed1']);

    const moved = page.getByRole('region', { name: 'Moved devices', exact: true });
    await expect.poll(() => moved.textContent()).toContain('10.66.0.5 → 10.66.0.9');
    expect(await moved.locator('details').getAttribute('open')).toBeNull();
    await moved.locator('summary').click();
    await expect.poll(() => moved.locator('details').textContent()).toContain('80/tcp');
    expect(await moved.locator('details').textContent()).toContain(MAC(4));

    const changed = page.getByRole('region', { name: 'Changed devices', exact: true });
    await changed.getByText('10.66.0.2').click();
    await expect.poll(() => changed.textContent()).toContain('ssh OpenSSH 8.0 → ssh OpenSSH 8.2');
    expect(await page.getByRole('region', { name: 'Added devices', exact: true }).textContent()).toContain('10.66.0.7');
    expect(await page.getByRole('region', { name: 'Removed devices', exact: true }).textContent()).toContain('10.66.0.4');
    expect(await page.getByRole('region', { name: 'Unchanged devices', exact: true }).count()).toBe(0);
    await browser.screenshot('compare');

    // Unchanged devices on request; then the other way round, picked in the form.
    await page.getByLabel('Show unchanged devices').check();
    await expect.poll(() => page.url()).toContain('all=true');
    await page.getByLabel('Before').selectOption(String(scanIds[1]));
    await page.getByLabel('After').selectOption(String(scanIds[0]));
    await expect.poll(() => summary.locator('.compare-counts > div').allTextContents()).toContain('Ports closed2');
  });

  it('is linked from every completed scan in the history and from the Changes page', async () => {
    await page.goto(browser.url('/scans'));
    await page.getByRole('link', { name: `Compare scan #${scanIds[1]} with the previous one` }).click();
    await expect.poll(() => page.url()).toContain(`/compare?current=${scanIds[1]}`);
    await expect.poll(() => page.getByRole('region', { name: 'Moved devices', exact: true }).count()).toBe(1);

    // The Changes page's network timeline: both scans ran today; the second found the changes.
    const changes = await readJson(await server.request('/api/changes?limit=1000', { key }));
    await page.goto(browser.url('/changes'));
    const network = page.getByRole('region', { name: 'Network timeline' });
    await expect
      .poll(() => network.getByRole('img').getAttribute('aria-label'))
      .toBe(`2 scans and ${changes.length} changes over 1 day with scans in the last 30 days`);
    expect(await network.locator('.day-bar').count()).toBe(1);

    await page.goto(browser.url(`/changes?scan_id=${scanIds[0]}`));
    await page.getByRole('link', { name: 'Compare scans' }).click();
    await expect.poll(() => page.url()).toContain(`/compare?current=${scanIds[0]}`);
    // The first scan has none before it: nothing to compare.
    await expect.poll(() => page.textContent('main')).toContain('Two completed scans are needed');
  });

  it('shows the device timeline: presence bars and change marks', async () => {
    const devices = await readJson(await server.request('/api/devices?limit=1000', { key }));
    const gone = devices.find((d: any) => d.ip_address === '10.66.0.4');
    await page.goto(browser.url(`/devices/${gone.id}`));
    const card = page.getByRole('region', { name: 'Timeline' });
    await expect.poll(() => card.locator('.presence').count(), { timeout: 15_000 }).toBe(2);
    expect(await card.locator('.presence.online').count()).toBe(1);
    expect(await card.locator('.presence.offline').count()).toBe(1);
    expect(await card.locator('.mark').count()).toBe(1);
    expect(await card.getByRole('img').getAttribute('aria-label')).toMatch(/^Presence over the last 30 days: online .*, offline/);
    expect(await card.textContent()).toContain('Seen by 1 of 2 scans');
    await card.getByLabel('Period').selectOption('7');
    await expect.poll(() => card.getByRole('img').getAttribute('aria-label')).toMatch(/last 7 days/);
    await browser.screenshot('device-timeline');
  });

  it('fits a phone without sideways scrolling, in both themes', async () => {
    const devices = await readJson(await server.request('/api/devices?limit=1000', { key }));
    const moved = devices.find((d: any) => d.mac_address === MAC(4));
    // 3306/tcp was not examined by the second scan: listed as last known, with when and by which scan.
    const stale = devices.find((d: any) => d.mac_address === MAC(1));
    await page.setViewportSize({ width: 390, height: 844 });
    for (const theme of ['light', 'dark']) {
      await page.evaluate((t) => localStorage.setItem('netwarden-theme', t), theme);
      await page.goto(browser.url('/compare?all=true'));
      await page.getByRole('region', { name: 'Moved devices', exact: true }).locator('summary').click();
      expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(theme);
      await noSidewaysScroll(`compare, ${theme}`);
      await browser.screenshot(`phone-compare-${theme}`);
      await page.goto(browser.url(`/devices/${moved.id}`));
      await page.getByRole('region', { name: 'Timeline' }).locator('.presence').first().waitFor();
      await noSidewaysScroll(`device timeline, ${theme}`);
      await page.goto(browser.url(`/devices/${stale.id}`));
      await page.locator('.ports-card tr.stale-port').first().waitFor();
      await noSidewaysScroll(`device ports, ${theme}`);
      await noSidewaysScrollInside('.ports-card', `the ports table of a device with a port last known, at 390 px, ${theme}`);
      await browser.screenshot(`phone-device-ports-${theme}`);
      await page.goto(browser.url('/changes'));
      await page.getByRole('region', { name: 'Network timeline' }).locator('.day-bar').first().waitFor();
      await noSidewaysScroll(`changes, ${theme}`);
      await browser.screenshot(`phone-device-timeline-${theme}`);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('ran without page errors or Content-Security-Policy violations', () => {
    expect(browser.errors).toEqual([]);
  });
});
