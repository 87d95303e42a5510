/// <reference lib="dom" />
/**
 * The device list with 10,000 devices in a real browser: it pages on the server, so the page
 * holds one page of rows whatever the inventory size, and search, sorting and paging ask the
 * API rather than filtering in the browser. (How fast: bench/ui-bench.mjs.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { seedInventory } from '../../bench/inventory.mjs';
import { testDatabases } from '../helpers/databases.js';
import { readJson, setupAdmin, startTestServer, type TestServer } from '../helpers/server.js';
import { browserSkipReason, openUi, type UiBrowser } from '../helpers/browser.js';

const skipReason = browserSkipReason();

const COUNT = 10_000;

describe.skipIf(skipReason !== null)('device list with 10,000 devices', () => {
  let server: TestServer;
  let browser: UiBrowser;
  let page: Page;
  let cookie: string;
  const deviceRequests: URL[] = [];

  beforeAll(async () => {
    server = await startTestServer(testDatabases()[0]);
    await seedInventory(server.store, COUNT, 7);
    cookie = await setupAdmin(server);
    browser = await openUi(server.baseUrl, cookie);
    page = browser.page;
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname === '/api/devices') deviceRequests.push(url);
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const rows = () => page.locator('main table tbody tr');
  const pagerText = () => page.locator('main .pager-range').first().textContent();

  async function apiTotal(query: string): Promise<number> {
    const res = await server.request(`/api/devices?${query}&limit=1`, { cookie });
    await readJson(res);
    return Number(res.headers.get('x-total-count'));
  }

  it('shows one page of rows and the full count', async () => {
    await page.goto(`${server.baseUrl}/devices`);
    await expect.poll(pagerText).toMatch(/1–50 of 10,000/);
    expect(await rows().count()).toBe(50);
    // Every request for the list asked for one page, never the whole inventory.
    expect(deviceRequests.length).toBeGreaterThan(0);
    for (const url of deviceRequests) expect(Number(url.searchParams.get('limit'))).toBeLessThanOrEqual(100);
    await browser.screenshot('20-devices-10000');
  });

  it('searches on the server and shows the matching count', async () => {
    const expected = await apiTotal('q=raspberry');
    expect(expected).toBeGreaterThan(50);
    await page.getByLabel('Search').fill('raspberry');
    await expect.poll(pagerText).toContain(`of ${expected.toLocaleString('en-GB')}`);
    expect(await rows().count()).toBe(50);
    expect(deviceRequests.some((url) => url.searchParams.get('q') === 'raspberry')).toBe(true);
    expect(new URL(page.url()).searchParams.get('q')).toBe('raspberry');
  });

  it('pages forward and sorts by risk through the API', async () => {
    await page.getByRole('button', { name: /Next/ }).click();
    await expect.poll(pagerText).toMatch(/^51–100 of /);
    await page.getByLabel('Search').fill('');
    await page.getByRole('button', { name: /^Risk/ }).click();
    await expect.poll(() => deviceRequests.at(-1)?.searchParams.get('sort')).toBe('risk_score');
    await expect.poll(pagerText).toMatch(/of 10,000/);
    expect(await rows().count()).toBe(50);
  });
});
