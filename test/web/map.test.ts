/// <reference lib="dom" />
/**
 * The Map page in Chromium against the real server (issue 22 §2, §5): an inventory of 450 devices
 * over three subnets written into the store, so the map starts as collapsed subnet clusters; a
 * cluster opens on a click, a device opens its page, filters and search narrow it, it exports SVG,
 * PNG and JSON, a scan imported meanwhile appears without a reload, and it fits a phone in both themes.
 * The page asks for the overview first and for a subnet's devices only when it is opened (issue 22 §1).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ipv4ToInt } from '../../src/core/net.js';
import { testDatabases } from '../helpers/databases.js';
import { adminWithKey, startTestServer, type TestServer } from '../helpers/server.js';
import { browserSkipReason, openUi, type UiBrowser } from '../helpers/browser.js';
import { FIRST } from '../helpers/compare-reports.js';

const skipReason = browserSkipReason();

/** What the page's cytoscape instance (kept by cytoscape on its container) draws. */
interface Drawn {
  nodes: { id: string; kind: string; x: number; y: number; classes: string }[];
}

describe.skipIf(skipReason !== null).sequential('web UI: the network map', () => {
  let server: TestServer;
  let browser: UiBrowser;
  let page: Page;
  let key: string;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    server = await startTestServer(testDatabases()[0]);
    const admin = await adminWithKey(server);
    key = admin.key;
    const now = new Date().toISOString();
    for (const subnet of ['10.77.1.0/24', '10.77.2.0/24', '10.77.3.0/24']) {
      await server.store.db
        .insertInto('scans')
        .values({ status: 'completed', profile: 'quick', subnet, scan_type: 'network', target: null, created_at: now, completed_at: now })
        .execute();
    }
    const rows = [];
    for (let i = 0; i < 450; i++) {
      const ip = i < 200 ? `10.77.1.${i + 2}` : i < 400 ? `10.77.2.${i - 198}` : `10.77.3.${i - 398}`;
      rows.push({
        identity: `ip:${ip}`,
        ip_address: ip,
        ip_sort: ipv4ToInt(ip),
        first_seen: now,
        last_seen: now,
        online: i % 10 === 0 ? 0 : 1,
        hostname: i === 420 ? 'label-printer.lan' : `host-${i}.lan`,
        device_type: i === 420 ? 'printer' : i % 3 === 0 ? 'phone' : 'workstation',
        zone: i >= 400 ? 'office' : null,
        risk_level: i % 50 === 1 ? 'high' : 'none',
        risk_score: i % 50 === 1 ? 70 : 0,
      });
    }
    await server.store.db.insertInto('devices').values(rows).execute();
    const printer = await server.store.db.selectFrom('devices').select('id').where('ip_address', '=', '10.77.3.22').executeTakeFirstOrThrow();
    ids.printer = printer.id;
    browser = await openUi(server.baseUrl, admin.cookie);
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const drawn = (): Promise<Drawn> =>
    page.evaluate(() => {
      const cy = document.querySelector<any>('.map-canvas')?._cyreg?.cy;
      if (!cy) return { nodes: [] };
      const box = (document.querySelector('.map-canvas') as HTMLElement).getBoundingClientRect();
      return {
        nodes: cy.nodes().map((n: any) => ({
          id: n.id(),
          kind: n.data('kind'),
          x: box.left + n.renderedPosition().x,
          y: box.top + n.renderedPosition().y,
          classes: n.classes().join(' '),
        })),
      };
    });
  const kinds = async (kind: string) => (await drawn()).nodes.filter((n) => n.kind === kind);
  const clickNode = async (id: string) => {
    await page.evaluate((nodeId) => {
      const cy = document.querySelector<any>('.map-canvas')._cyreg.cy;
      cy.center(cy.getElementById(nodeId));
    }, id);
    const node = (await drawn()).nodes.find((n) => n.id === id)!;
    await page.mouse.click(node.x, node.y);
  };
  const noSidewaysScroll = async (what: string) => {
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, what).toBeLessThanOrEqual(1);
  };

  /** The map's requests (GET /api/visualization/topology), as their query strings, from now on. */
  const topologyRequests = () => {
    const seen: string[] = [];
    const listener = (request: { url(): string }) => {
      const url = new URL(request.url());
      if (url.pathname === '/api/visualization/topology') seen.push(decodeURIComponent(url.search));
    };
    page.on('request', listener);
    return { seen, stop: () => page.off('request', listener) };
  };

  it('draws a large network as subnet clusters that open on a click; a device opens its page', async () => {
    const requests = topologyRequests();
    await page.goto(browser.url('/devices'));
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Map', exact: true }).click();
    await expect.poll(() => page.url()).toContain('/map');
    await expect.poll(() => page.locator('.map-summary').textContent(), { timeout: 15_000 }).toContain('450 devices in');
    await expect
      .poll(async () => (await kinds('subnet')).map((n) => n.id))
      .toEqual(expect.arrayContaining(['subnet:10.77.1.0/24', 'subnet:10.77.2.0/24', 'subnet:10.77.3.0/24']));
    expect(await kinds('device')).toEqual([]);
    expect((await kinds('internet')).length).toBe(1);
    // Only the overview was asked for: no device crossed the wire yet.
    expect(requests.seen).toEqual(['?detail=subnets']);
    await browser.screenshot('map-clusters');

    await clickNode('subnet:10.77.3.0/24');
    await expect.poll(async () => (await kinds('device')).length).toBe(50);
    const offline = (await kinds('device')).filter((n) => n.classes.includes('offline'));
    expect(offline.length).toBe(5);
    // That subnet's devices, fetched when it opened; nothing else.
    expect(requests.seen).toEqual(['?detail=subnets', '?subnet=10.77.3.0/24']);
    await browser.screenshot('map-open-subnet');

    // Closed and opened again: drawn from what was fetched, not asked again.
    await clickNode('subnet:10.77.3.0/24');
    await expect.poll(async () => (await kinds('device')).length).toBe(0);
    await page.locator('.map-subnets summary').click();
    await page.getByRole('button', { name: 'Open 10.77.3.0/24' }).click();
    await expect.poll(async () => (await kinds('device')).length).toBe(50);
    expect(requests.seen).toEqual(['?detail=subnets', '?subnet=10.77.3.0/24']);
    // A second subnet: 200 devices, with its count shown before it opens.
    expect(await page.locator('.map-subnets li', { hasText: '10.77.1.0/24' }).textContent()).toContain('200 devices');
    await page.getByRole('button', { name: 'Open 10.77.1.0/24' }).click();
    await expect.poll(async () => (await kinds('device')).length).toBe(250);
    expect(requests.seen).toEqual(['?detail=subnets', '?subnet=10.77.3.0/24', '?subnet=10.77.1.0/24']);
    requests.stop();
    await page.getByRole('button', { name: 'Close 10.77.1.0/24' }).click();
    await expect.poll(async () => (await kinds('device')).length).toBe(50);

    await clickNode(`device:${ids.printer}`);
    await expect.poll(() => page.url()).toContain(`/devices/${ids.printer}`);
  });

  it('filters by zone and risk, and finds a device by name', async () => {
    await page.goto(browser.url('/map?zone=office'));
    // 50 devices: small enough to start open.
    await expect.poll(async () => (await kinds('device')).length, { timeout: 15_000 }).toBe(50);
    expect((await kinds('subnet')).map((n) => n.id)).toEqual(['subnet:10.77.3.0/24']);

    await page.getByLabel('Risk').selectOption('high');
    await expect.poll(() => page.url()).toContain('risk=high');
    await expect.poll(async () => (await kinds('device')).length).toBe(1);

    await page.goto(browser.url('/map'));
    await expect.poll(() => page.locator('.map-summary').textContent(), { timeout: 15_000 }).toContain('450 devices');
    await page.getByLabel('Find').fill('label-printer');
    await page.getByRole('button', { name: 'Find next' }).click();
    // Its subnet opens and the device is selected.
    await expect
      .poll(() =>
        page.evaluate(() =>
          document
            .querySelector<any>('.map-canvas')
            ._cyreg.cy.$(':selected')
            .map((n: any) => n.id()),
        ),
      )
      .toEqual([`device:${ids.printer}`]);
    await expect.poll(() => page.getByRole('region', { name: 'Matches' }).getByRole('link').textContent()).toBe('label-printer.lan');
  });

  it('exports SVG, PNG and JSON', async () => {
    const save = async (name: string) => {
      const [file] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name }).or(page.getByRole('link', { name })).click(),
      ]);
      return { name: file.suggestedFilename(), body: readFileSync(await file.path()) };
    };
    const svg = await save('SVG');
    expect(svg.name).toMatch(/^netwarden-map-.*\.svg$/);
    expect(svg.body.toString()).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(svg.body.toString()).toContain('10.77.3.0/24');
    const png = await save('PNG');
    expect(png.name).toMatch(/\.png$/);
    expect(png.body.subarray(1, 4).toString()).toBe('PNG');
    const json = await save('JSON');
    expect(json.name).toMatch(/\.json$/);
    expect(JSON.parse(json.body.toString()).nodes.length).toBeGreaterThan(450);
  });

  it('shows a scan finished meanwhile without a reload, fetching an open subnet again', async () => {
    await page.goto(browser.url('/map'));
    await expect.poll(async () => (await kinds('subnet')).length, { timeout: 15_000 }).toBeGreaterThan(2);
    expect((await kinds('subnet')).map((n) => n.id)).not.toContain('subnet:10.66.0.0/28');
    await page.locator('.map-subnets summary').click();
    await page.getByRole('button', { name: 'Open 10.77.3.0/24' }).click();
    await expect.poll(async () => (await kinds('device')).length).toBe(50);
    const requests = topologyRequests();
    const res = await server.request('/api/scans/import', { method: 'POST', body: FIRST, headers: { 'Content-Type': 'application/xml' }, key });
    expect(res.status).toBe(201);
    await expect.poll(async () => (await kinds('subnet')).map((n) => n.id), { timeout: 15_000 }).toContain('subnet:10.66.0.0/28');
    // The open subnet stays open, its devices asked for again.
    await expect.poll(() => requests.seen).toEqual(['?detail=subnets', '?subnet=10.77.3.0/24']);
    await expect.poll(async () => (await kinds('device')).length).toBe(50);
    requests.stop();
  });

  it('fits a phone without sideways scrolling, in both themes', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const theme of ['light', 'dark']) {
      await page.evaluate((t) => localStorage.setItem('netwarden-theme', t), theme);
      await page.goto(browser.url('/map?zone=office'));
      await expect.poll(async () => (await kinds('device')).length, { timeout: 15_000 }).toBe(50);
      expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(theme);
      await noSidewaysScroll(`map, ${theme}`);
      await browser.screenshot(`phone-map-${theme}`);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('ran without page errors or Content-Security-Policy violations', () => {
    expect(browser.errors).toEqual([]);
  });

  it('finds up to 20 real matches inside a subnet filter, not the first 20 of the whole inventory', async () => {
    // 449 host names hold "host-"; the 400 of 10.77.1.0/24 and 10.77.2.0/24 come first in address order, 49 are in 10.77.3.0/24.
    await page.goto(browser.url('/map?subnet=10.77.3.0/24'));
    await expect.poll(() => page.locator('.map-summary').textContent(), { timeout: 15_000 }).toContain('50 devices');
    await page.getByLabel('Find').fill('host-');
    await expect.poll(() => page.locator('.map-summary').textContent(), { timeout: 15_000 }).toContain('more than 20 matches');
    const listed = page.getByRole('region', { name: 'Matches' }).getByRole('listitem');
    await expect.poll(() => listed.count()).toBe(20);
    for (const text of await listed.allTextContents()) expect(text).toContain('10.77.3.');
    // Narrower: host-440 … host-449, the 10 of that subnet (host-44 itself is in 10.77.1.0/24).
    await page.getByLabel('Find').fill('host-44');
    await expect.poll(() => page.locator('.map-summary').textContent()).toContain('10 matches');
    await expect.poll(() => listed.count()).toBe(10);
  });
});
