/// <reference lib="dom" />
/**
 * The Ports page, the Risk map and the live Compare page in Chromium against the real server
 * (issue 22 §3, §5): real nmap reports imported over the API, a zone policy set through it. The
 * port matrix marks forbidden and rare ports, filters and sorts; the risk map draws one square per
 * device grouped by zone or subnet and opens the device; a compare of the latest two follows a new
 * scan and a pinned one says a newer scan exists; all fit 390 px and 1440 px in both themes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { testDatabases } from '../helpers/databases.js';
import { adminWithKey, readJson, startTestServer, type TestServer } from '../helpers/server.js';
import { browserSkipReason, openUi, type UiBrowser } from '../helpers/browser.js';
import { FIRST, SECOND, nmapReport } from '../helpers/compare-reports.js';

const skipReason = browserSkipReason();

/** A second network: .1 has SSH and telnet, .2 nothing open. */
const OTHER = nmapReport('10.66.1.0/28', '1-1000', [
  {
    ip: '10.66.1.1',
    mac: '00:16:3E:33:00:01',
    ports: [
      { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.6' },
      { port: 23, service: 'telnet' },
    ],
  },
  { ip: '10.66.1.2', mac: '00:16:3E:33:00:02', ports: [] },
]);

/** A third scan of the first network: the same hosts as the second. */
const THIRD = nmapReport('10.66.0.0/28', '22,80', [
  { ip: '10.66.0.2', mac: '00:16:3E:22:00:01', ports: [{ port: 22, service: 'ssh', product: 'OpenSSH', version: '8.2' }] },
]);

describe.skipIf(skipReason !== null).sequential('web UI: ports, risk map and live compare', () => {
  let server: TestServer;
  let browser: UiBrowser;
  let page: Page;
  let key: string;
  const scanIds: number[] = [];
  let deviceIds: Map<string, number>;

  const importXml = async (xml: string) => {
    const res = await server.request('/api/scans/import', { method: 'POST', body: xml, headers: { 'Content-Type': 'application/xml' }, key });
    expect(res.status, await res.clone().text()).toBe(201);
    return (await readJson(res)).scan_id as number;
  };

  beforeAll(async () => {
    server = await startTestServer(testDatabases()[0]);
    const admin = await adminWithKey(server);
    key = admin.key;
    // The other network first: the latest two scans are then of the same network.
    for (const xml of [OTHER, FIRST, SECOND]) scanIds.push(await importXml(xml));
    const devices = await readJson(await server.request('/api/devices?limit=1000', { key }));
    deviceIds = new Map(devices.map((d: any) => [d.ip_address, d.id]));
    for (const [ip, zone] of [
      ['10.66.1.1', 'IoT'],
      ['10.66.1.2', 'IoT'],
      ['10.66.0.2', 'Servers'],
    ] as const) {
      const res = await server.request(`/api/devices/${deviceIds.get(ip)}`, { method: 'PUT', key, json: { zone } });
      expect(res.status).toBe(200);
    }
    const res = await server.request('/api/policies', {
      method: 'PUT',
      key,
      json: { IoT: { forbidden_ports: [23], forbidden_services: [], allowed_ports: null, severity: 'high' } },
    });
    expect(res.status).toBe(200);
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

  it('shows the port matrix: counts, forbidden and rare ports, devices with their ports', async () => {
    await page.goto(browser.url('/'));
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Ports' }).click();
    const ports = page.getByRole('table', { name: 'Open ports', exact: true });
    await expect.poll(() => ports.locator('tbody tr').count(), { timeout: 15_000 }).toBe(4);
    // Most devices first: 22 on five devices.
    expect(await ports.locator('tbody tr').first().textContent()).toMatch(/^22\/tcp5ssh/);
    const telnet = ports.locator('tbody tr', { hasText: '23/tcp' });
    expect(await telnet.getAttribute('class')).toContain('forbidden');
    expect(await telnet.textContent()).toContain('Forbidden');
    expect(await ports.locator('tbody tr', { hasText: '3306/tcp' }).textContent()).toContain('Rare');

    const devices = page.getByRole('table', { name: 'Devices and their open ports' });
    expect(await devices.locator('tbody tr').count()).toBe(6);
    const iot = devices.locator('tbody tr', { hasText: '10.66.1.1' });
    expect(await iot.locator('.port-chip.forbidden').textContent()).toContain('23');
    expect(await iot.locator('.port-chip.forbidden').textContent()).toContain('forbidden by its zone policy');
    await browser.screenshot('ports');

    // A port's devices; then sorted by open ports, most first.
    await page.getByRole('button', { name: 'Devices with 23/tcp open' }).click();
    await expect.poll(() => page.url()).toContain('port=23%2Ftcp');
    await expect.poll(() => devices.locator('tbody tr').count()).toBe(1);
    await page.getByRole('button', { name: 'Show all ports' }).click();
    await expect.poll(() => devices.locator('tbody tr').count()).toBe(6);
    await devices.getByRole('button', { name: 'Open ports' }).click();
    await expect.poll(() => page.url()).toContain('sort=ports');
    const first = await devices.locator('tbody tr').first().textContent();
    expect(first).toMatch(/10\.66\.(0\.2|0\.9|1\.1)/);
    expect(await devices.locator('thead th[aria-sort="descending"]').textContent()).toContain('Open ports');
  });

  it('filters by zone and subnet on the server, and by forbidden or rare ports', async () => {
    await page.goto(browser.url('/ports'));
    const devices = page.getByRole('table', { name: 'Devices and their open ports' });
    await expect.poll(() => devices.locator('tbody tr').count(), { timeout: 15_000 }).toBe(6);
    await page.getByLabel('Zone').selectOption('IoT');
    await expect.poll(() => page.url()).toContain('zone=IoT');
    await expect.poll(() => devices.locator('tbody tr').count()).toBe(1);
    await page.getByLabel('Zone').selectOption('');

    await page.getByLabel('Subnet').fill('10.66.0.0/24');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.url()).toContain('subnet=10.66.0.0%2F24');
    await expect.poll(() => devices.locator('tbody tr').count()).toBe(5);
    await page.getByLabel('Subnet').fill('not a subnet');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.textContent('form[role="search"]')).toContain('An IPv4 network such as');
    await page.getByLabel('Subnet').fill('');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => devices.locator('tbody tr').count()).toBe(6);

    await page.getByLabel('Show').selectOption('forbidden');
    await expect.poll(() => devices.locator('tbody tr').count()).toBe(1);
    expect(await page.getByRole('table', { name: 'Open ports', exact: true }).locator('tbody tr').count()).toBe(1);
    await page.getByLabel('Show').selectOption('rare');
    await expect
      .poll(() => page.getByRole('table', { name: 'Open ports', exact: true }).locator('tbody tr').allTextContents())
      .toEqual([expect.stringMatching(/^80\/tcp/), expect.stringMatching(/^23\/tcp/), expect.stringMatching(/^3306\/tcp/)]);
  });

  it('draws the risk map: a square per device, grouped by zone or subnet, each opening its device', async () => {
    await page.goto(browser.url('/risk-map'));
    const iot = page.getByRole('region', { name: 'Zone IoT' });
    await expect.poll(() => iot.locator('.heat-cell').count(), { timeout: 15_000 }).toBe(2);
    const devices = await readJson(await server.request('/api/devices?limit=1000', { key }));
    expect(await page.locator('.heat-groups .heat-cell').count()).toBe(devices.length);
    // The riskiest device of the zone first, larger; 10.66.1.1 has telnet (and breaks the policy).
    const cell = iot.locator('.heat-cell').first();
    expect(await cell.getAttribute('aria-label')).toMatch(/^10\.66\.1\.1\b.*: \w+ risk, score \d+/);
    const sizes = await iot.locator('.heat-cell').evaluateAll((cells) => cells.map((c) => (c as HTMLElement).offsetWidth));
    expect(sizes[0]).toBeGreaterThan(sizes[1]);
    await browser.screenshot('risk-map');

    await page.getByLabel('Group by').selectOption('subnet');
    await expect.poll(() => page.getByRole('region', { name: 'Subnet 10.66.1.0/28' }).locator('.heat-cell').count()).toBe(2);
    expect(await page.getByRole('region', { name: 'Subnet 10.66.0.0/28' }).locator('.heat-cell').count()).toBe(devices.length - 2);

    await page.getByRole('region', { name: 'Subnet 10.66.1.0/28' }).locator('.heat-cell').first().click();
    await expect.poll(() => page.url()).toContain(`/devices/${deviceIds.get('10.66.1.1')}`);
  });

  it('fits 390 px and 1440 px without sideways scrolling, in both themes', async () => {
    for (const width of [390, 1440]) {
      await page.setViewportSize({ width, height: 900 });
      for (const theme of ['light', 'dark']) {
        await page.evaluate((t) => localStorage.setItem('netwarden-theme', t), theme);
        await page.goto(browser.url('/ports'));
        await page.getByRole('table', { name: 'Devices and their open ports' }).locator('tbody tr').first().waitFor();
        expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(theme);
        await noSidewaysScroll(`ports, ${width} px, ${theme}`);
        await browser.screenshot(`ports-${width}-${theme}`);
        await page.goto(browser.url('/risk-map?group=subnet'));
        await page.locator('.heat-cell').first().waitFor();
        await noSidewaysScroll(`risk map, ${width} px, ${theme}`);
        await browser.screenshot(`risk-map-${width}-${theme}`);
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('keeps Compare current: the latest two follow a new scan; a pinned compare says a newer scan exists', async () => {
    const streamOpen = (p: Page) => p.waitForResponse((r) => new URL(r.url()).pathname === '/api/events' && r.status() === 200);
    let open = streamOpen(page);
    await page.goto(browser.url(`/compare?current=${scanIds[2]}&previous=${scanIds[1]}`));
    await open;
    const summary = page.getByRole('region', { name: 'Comparison summary' });
    await expect.poll(() => summary.textContent(), { timeout: 15_000 }).toContain(`#${scanIds[2]}`);

    const latest = await browser.context.newPage();
    open = streamOpen(latest);
    await latest.goto(browser.url('/compare'));
    await open;
    const latestSummary = latest.getByRole('region', { name: 'Comparison summary' });
    await expect.poll(() => latestSummary.textContent(), { timeout: 15_000 }).toContain(`#${scanIds[2]}`);
    expect(await page.textContent('main')).not.toContain('A newer scan exists');

    const third = await importXml(THIRD);
    await expect.poll(() => page.textContent('main'), { timeout: 15_000 }).toContain('A newer scan exists');
    const link = page.getByRole('link', { name: `Compare it with scan #${scanIds[2]}` });
    expect(await link.getAttribute('href')).toBe(`/compare?current=${third}&previous=${scanIds[2]}`);
    // The pinned compare itself stays.
    expect(await summary.textContent()).toContain(`#${scanIds[1]}`);

    await expect.poll(() => latestSummary.textContent(), { timeout: 15_000 }).toContain(`#${third}`);
    expect(await latestSummary.textContent()).toContain(`#${scanIds[2]}`);
    await latest.close();

    await link.click();
    await expect.poll(() => summary.textContent()).toContain(`#${third}`);
    expect(await page.textContent('main')).not.toContain('A newer scan exists');
  });

  it('ran without page errors or Content-Security-Policy violations', () => {
    expect(browser.errors).toEqual([]);
  });
});
