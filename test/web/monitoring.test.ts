/// <reference lib="dom" />
/**
 * The web UI's continuous-monitoring work in Chromium, over a seeded inventory (192.168.50.x:
 * data only, never scanned) and real scans of 127.0.0.1 only: the Scans page with queued and
 * cancelled scans, phone layouts of Changes and the device page, the theme button, what "no risk"
 * covers, live progress over the event stream, schedules, notification channels and presence.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { testDatabases } from '../helpers/databases.js';
import { seedInventory, type Seed } from '../helpers/seed.js';
import { adminWithKey, readJson, startTestServer, type TestServer } from '../helpers/server.js';
import { waitForScan } from '../helpers/scans.js';
import type { Listener } from '../helpers/listeners.js';
import { browserSkipReason, countRequests, openUi, type UiBrowser } from '../helpers/browser.js';
import { silentListener } from './receivers.js';

const skipReason = browserSkipReason();

/** The addresses these tests scan: nothing else, ever. */
const LOOPBACK = '127.0.0.1';
/** Holds a listener that accepts and never answers, so that service detection keeps a scan running. */
const SLOW_HOST = '127.0.0.42';
/** A port nothing listens on in the test environment: a normal scan of it finds nothing. */
const CLOSED_PORT = 9;
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };

describe.skipIf(skipReason !== null).sequential('web UI: monitoring', () => {
  let server: TestServer;
  let browser: UiBrowser;
  let page: Page;
  let errors: string[];
  let key: string;
  let seed: Seed;
  let silent: Listener;

  beforeAll(async () => {
    silent = await silentListener(SLOW_HOST);
    server = await startTestServer(testDatabases()[0], {
      settings: {
        network: { subnet: `${LOOPBACK}/32` },
        scanning: { port_range: `${CLOSED_PORT},${silent.port}`, os_detection: false, max_hosts: 1 },
      },
    });
    const admin = await adminWithKey(server);
    key = admin.key;
    seed = await seedInventory(server.store);
    browser = await openUi(server.baseUrl, admin.cookie);
    page = browser.page;
    errors = browser.errors;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await silent?.close();
  });

  /** Starts a normal scan of SLOW_HOST, which runs until it is cancelled (or for a long while). */
  async function startSlowScan(): Promise<number> {
    const res = await server.request(`/api/scan/trigger?profile=normal&subnet=${SLOW_HOST}/32`, { method: 'POST', key });
    expect(res.status).toBe(200);
    return (await readJson(res)).scan_id;
  }

  const url = (path: string) => `${server.baseUrl}${path}`;
  const main = () => page.locator('main');

  it('has a theme button with an accessible name that says the choice, and works from the keyboard', async () => {
    await page.goto(url('/'));
    const toggle = page.getByRole('button', { name: /^Theme: (system|light|dark)$/ });
    await toggle.waitFor();
    expect(await toggle.evaluate((el) => el.tagName)).toBe('BUTTON');
    expect(await toggle.getAttribute('aria-label')).toBe('Theme: system');
    // An icon, not only words.
    expect(await toggle.locator('svg').count()).toBe(1);
    await toggle.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => toggle.getAttribute('aria-label')).toBe('Theme: light');
    await page.keyboard.press('Space');
    await expect.poll(() => toggle.getAttribute('aria-label')).toBe('Theme: dark');
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    await page.keyboard.press('Enter');
    await expect.poll(() => toggle.getAttribute('aria-label')).toBe('Theme: system');
  });

  it('shows changes as a table on a wide screen and as the compact list on a phone, with what changed', async () => {
    const latest = seed.changes[seed.changes.length - 1];
    await page.goto(url('/changes'));
    await page.getByRole('table').waitFor();
    expect(await page.getByRole('columnheader', { name: 'What changed' }).isVisible()).toBe(true);

    await page.setViewportSize(PHONE);
    try {
      const list = page.getByRole('list', { name: 'Changes' });
      await list.waitFor();
      expect(await page.getByRole('table').count()).toBe(0);
      // Every description is on screen, without sideways scrolling.
      await expect.poll(() => list.getByRole('listitem').count()).toBe(Math.min(seed.changes.length, 50));
      const item = list.getByText(latest.description, { exact: true }).first();
      expect(await item.isVisible()).toBe(true);
      const box = await item.boundingBox();
      expect(box!.x + box!.width).toBeLessThanOrEqual(PHONE.width);
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(1);
      await browser.screenshot('m01-phone-changes');
    } finally {
      await page.setViewportSize(DESKTOP);
    }
  });

  it('puts risk and findings before the details on a phone', async () => {
    const camera = seed.devices.camera;
    await page.setViewportSize(PHONE);
    try {
      await page.goto(url(`/devices/${camera.id}`));
      await page.getByRole('heading', { name: 'Details', level: 2 }).waitFor();
      const top = async (name: string) => (await page.getByRole('heading', { name, level: 2, exact: true }).boundingBox())!.y;
      const [risk, findings, details, ports] = await Promise.all(['Risk', 'Risk findings', 'Details', 'Ports'].map(top));
      expect(risk).toBeLessThan(findings);
      expect(findings).toBeLessThan(details);
      expect(details).toBeLessThan(ports);
      await browser.screenshot('m02-phone-device');
    } finally {
      await page.setViewportSize(DESKTOP);
    }
    // On a wide screen risk and details share the first row.
    await page.goto(url(`/devices/${camera.id}`));
    await page.getByRole('heading', { name: 'Details', level: 2 }).waitFor();
    const risk = await page.getByRole('heading', { name: 'Risk', level: 2, exact: true }).boundingBox();
    const details = await page.getByRole('heading', { name: 'Details', level: 2 }).boundingBox();
    expect(Math.abs(risk!.y - details!.y)).toBeLessThan(2);
    expect(risk!.x).toBeLessThan(details!.x);
  });

  it('says what a device without risk was checked for: ports not scanned after a quick scan, the port list after a normal one', async () => {
    const quick = await readJson(await server.request(`/api/scan/device/${LOOPBACK}?profile=quick`, { method: 'POST', key }));
    expect((await waitForScan(server, key, quick.scan_id)).status).toBe('completed');
    const device = (await readJson(await server.request(`/api/devices?q=${LOOPBACK}`, { key }))).find(
      (d: { ip_address: string }) => d.ip_address === LOOPBACK,
    );
    expect(device.risk_level).toBe('none');

    await page.goto(url(`/devices/${device.id}`));
    const badge = page.locator('.risk-card .badge').first();
    await expect.poll(() => badge.textContent()).toBe('No finding · ports not scanned');
    await page.goto(url(`/devices?q=${LOOPBACK}`));
    await expect.poll(() => main().locator('table .badge.risk-none').first().textContent()).toBe('No finding · ports not scanned');

    const normal = await readJson(await server.request(`/api/scan/device/${LOOPBACK}?profile=normal`, { method: 'POST', key }));
    expect((await waitForScan(server, key, normal.scan_id)).status).toBe('completed');
    await page.goto(url(`/devices/${device.id}`));
    await expect.poll(() => badge.textContent()).toBe(`No finding in ports ${CLOSED_PORT}, ${silent.port}`);
    // Which scan examined them, and when (CONTRACT §14).
    await expect
      .poll(() => main().locator('.risk-card ul.examined li').first().textContent())
      .toMatch(new RegExp(`^ports ${CLOSED_PORT}, ${silent.port}: scan #${normal.scan_id}, `));
    await browser.screenshot('m03-device-no-finding');
    // The list row stays compact: the ports and the time are in the badge's title.
    await page.goto(url(`/devices?q=${LOOPBACK}`));
    const row = main().locator('table .badge.risk-none').first();
    await expect.poll(() => row.textContent()).toBe('No finding');
    expect(await row.getAttribute('title')).toMatch(new RegExp(`^No risk found in ports ${CLOSED_PORT}, ${silent.port}, examined .+ or later\\.$`));
  });

  it('shows a cancelled scan as cancelled in the history and on the dashboard, never as an error', async () => {
    const scanId = await startSlowScan();
    expect((await server.request(`/api/scans/${scanId}/cancel`, { method: 'POST', key })).status).toBe(200);
    const scan = await waitForScan(server, key, scanId);
    expect(scan.status).toBe('cancelled');

    await page.goto(url('/scans'));
    const row = page
      .getByRole('table', { name: 'Scan history' })
      .getByRole('row')
      .filter({ hasText: new RegExp(`^${scan.scan_id}`) });
    await expect.poll(() => row.locator('.badge').textContent()).toBe('Cancelled');
    expect(await row.locator('.error-text').count()).toBe(0);
    await page.goto(url('/'));
    const card = page.locator('section.card').filter({ has: page.getByRole('heading', { name: 'Last scan' }) });
    await expect.poll(() => card.locator('.badge').first().textContent()).toBe('Cancelled');
    expect(await card.locator('.error-text').count()).toBe(0);
    expect(await card.locator('.badge').first().getAttribute('class')).toContain('status-cancelled');
  });

  /** Opens `path` and waits until its event stream is open. */
  async function gotoLive(path: string): Promise<void> {
    const stream = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/events' && r.status() === 200);
    await page.goto(url(path));
    await stream;
  }

  it('follows a scan over the event stream without asking /api/scan/status', async () => {
    await gotoLive('/scans');
    const polls = countRequests(page, '/api/scan/status');
    try {
      const start = page.getByRole('form', { name: 'Start a scan' });
      await start.getByLabel('Profile').selectOption('quick');
      await start.getByLabel('Subnet').fill(`${LOOPBACK}/32`);
      await start.getByRole('button', { name: 'Start scan' }).click();
      const result = page.getByRole('region', { name: 'Scan result' });
      await expect.poll(() => result.locator('.badge').textContent(), { timeout: 60_000 }).toBe('Completed');

      // A scan that runs a while: its card shows and stays without a single status request,
      // and the history row shows it running; cancelling ends it over the stream too.
      await start.getByLabel('Profile').selectOption('normal');
      await start.getByLabel('Subnet').fill(`${SLOW_HOST}/32`);
      await start.getByRole('button', { name: 'Start scan' }).click();
      const running = page.getByRole('region', { name: 'Running scan' });
      await running.waitFor();
      await expect.poll(() => page.getByRole('table', { name: 'Scan history' }).locator('.badge').first().textContent()).toBe('Running');
      await page.waitForTimeout(2500); // Polling would have asked twice by now.
      await browser.screenshot('m04-scan-running-live');
      await running.getByRole('button', { name: 'Cancel scan' }).click();
      await expect.poll(() => result.locator('.badge').textContent()).toBe('Cancelled');
      expect(polls.count()).toBe(0);
    } finally {
      polls.stop();
    }
  });

  it('falls back to polling when the event stream cannot be had', async () => {
    // As a proxy that breaks streaming would: the stream answers 404 and the browser gives up on it.
    await page.route('**/api/events*', (route) => route.fulfill({ status: 404, contentType: 'application/json', body: '{"detail":"Not Found"}' }));
    try {
      await page.goto(url('/scans'));
      await page.getByRole('form', { name: 'Start a scan' }).waitFor();
      const polls = countRequests(page, '/api/scan/status');
      try {
        const start = page.getByRole('form', { name: 'Start a scan' });
        await start.getByLabel('Profile').selectOption('normal');
        await start.getByLabel('Subnet').fill(`${SLOW_HOST}/32`);
        await start.getByRole('button', { name: 'Start scan' }).click();
        const running = page.getByRole('region', { name: 'Running scan' });
        await running.waitFor();
        await expect.poll(() => polls.count()).toBeGreaterThanOrEqual(2);
        await running.getByRole('button', { name: 'Cancel scan' }).click();
        await expect.poll(() => page.getByRole('region', { name: 'Scan result' }).locator('.badge').textContent()).toBe('Cancelled');
      } finally {
        polls.stop();
      }
    } finally {
      await page.unroute('**/api/events*');
    }
  });

  it('shows a device edited elsewhere in the open device list without reloading the page', async () => {
    const router = seed.devices.router;
    await gotoLive('/devices?q=192.168.50');
    await page.getByRole('link', { name: router.ip_address, exact: true }).waitFor();
    await page.evaluate(() => ((window as { __sameDocument?: boolean }).__sameDocument = true));
    const res = await server.request(`/api/devices/${router.id}`, { method: 'PUT', key, json: { label: 'Renamed from the API' } });
    expect(res.status).toBe(200);
    await page.getByText('Renamed from the API').waitFor();
    expect(page.url()).toBe(url('/devices?q=192.168.50'));
    expect(await page.evaluate(() => (window as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
  });

  it('says when a device was last seen and how many scans missed it', async () => {
    const laptop = seed.devices.laptop;
    const summary = await readJson(await server.request(`/api/devices/${laptop.id}`, { key }));
    expect(summary.missed_scans).toBeGreaterThan(0);
    const missing = `missing from ${summary.missed_scans} scan${summary.missed_scans === 1 ? '' : 's'}`;

    await page.goto(url(`/devices?q=${laptop.ip_address}`));
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: laptop.ip_address, exact: true }) });
    await expect.poll(() => row.textContent()).toContain(`${summary.online ? 'Online' : 'Offline'}, ${missing}`);
    expect(await row.getByRole('img', { name: new RegExp(`^${summary.online ? 'Online' : 'Offline'}, ${missing}$`) }).count()).toBe(1);

    await page.goto(url(`/devices/${laptop.id}`));
    const facts = page.locator('.facts-card');
    await expect.poll(() => facts.textContent()).toContain(`(${missing}`);
    expect(await facts.textContent()).toMatch(/Last seen/);
    await browser.screenshot('m05-device-presence');
  });

  it('ran without page errors or Content-Security-Policy violations', () => {
    expect(errors).toEqual([]);
  });
});
