/// <reference lib="dom" />
/**
 * The export buttons of the Devices and Changes pages in Chromium over the seeded inventory
 * (192.168.50.x: data only, never scanned): their links carry the page's current filters, and
 * clicking one downloads the export of exactly the rows the filters select. And the Metrics
 * settings card that makes /metrics public.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { testDatabases } from '../helpers/databases.js';
import { parseCsv } from '../helpers/csv.js';
import { seedInventory, type Seed } from '../helpers/seed.js';
import { adminWithKey, readJson, startTestServer, type TestServer } from '../helpers/server.js';
import { browserSkipReason, openUi, type UiBrowser } from '../helpers/browser.js';

const skipReason = browserSkipReason();

describe.skipIf(skipReason !== null).sequential('web UI: export buttons', () => {
  let server: TestServer;
  let browser: UiBrowser;
  let page: Page;
  let errors: string[];
  let key: string;
  let seed: Seed;

  beforeAll(async () => {
    server = await startTestServer(testDatabases()[0]);
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
  });

  const url = (path: string) => `${server.baseUrl}${path}`;

  async function download(name: RegExp): Promise<{ fileName: string; text: string }> {
    const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name }).click()]);
    return { fileName: file.suggestedFilename(), text: readFileSync(await file.path(), 'utf8') };
  }

  it('exports the devices the filters select, as CSV and JSON', async () => {
    await page.goto(url('/devices?risk_level=high&sort=risk_score&order=desc'));
    await page.locator('main table tbody tr').first().waitFor();
    const csvLink = page.getByRole('link', { name: 'Export CSV' });
    const href = new URL((await csvLink.getAttribute('href'))!, server.baseUrl);
    expect(href.pathname).toBe('/api/export/devices');
    expect(Object.fromEntries(href.searchParams)).toEqual({ risk_level: 'high', format: 'csv' });
    await browser.screenshot('60-devices-export');

    const want = await readJson(await server.request('/api/devices?risk_level=high&limit=1000', { key }));
    expect(want.length).toBeGreaterThan(0);
    expect(want.length).toBeLessThan(Object.keys(seed.devices).length);
    const csv = await download(/^Export CSV$/);
    expect(csv.fileName).toMatch(/^netwarden-devices-\d{8}T\d{6}Z\.csv$/);
    const [, ...rows] = parseCsv(csv.text);
    expect(rows.map((r) => Number(r[0]))).toEqual(want.map((d: { id: number }) => d.id));
    const json = await download(/^Export JSON$/);
    expect(json.fileName).toMatch(/\.json$/);
    expect(JSON.parse(json.text)).toEqual(want);

    // Changing a filter on the page changes the links.
    await page.getByLabel('Search').fill('nas');
    await expect.poll(async () => new URL((await csvLink.getAttribute('href'))!, server.baseUrl).searchParams.get('q')).toBe('nas');
  });

  it('exports the changes the filters select', async () => {
    await page.goto(url(`/changes?severity=info&scan_id=${seed.scans.second.id}`));
    await page.getByRole('link', { name: 'Export JSON' }).waitFor();
    const href = new URL((await page.getByRole('link', { name: 'Export JSON' }).getAttribute('href'))!, server.baseUrl);
    expect(href.pathname).toBe('/api/export/changes');
    expect(Object.fromEntries(href.searchParams)).toEqual({ scan_id: String(seed.scans.second.id), severity: 'info', format: 'json' });
    const want = await readJson(await server.request(`/api/changes?severity=info&scan_id=${seed.scans.second.id}&limit=1000`, { key }));
    expect(want.length).toBeGreaterThan(0);
    const json = await download(/^Export JSON$/);
    expect(json.fileName).toMatch(/^netwarden-changes-\d{8}T\d{6}Z\.json$/);
    expect(JSON.parse(json.text)).toEqual(want);
    expect(errors).toEqual([]);
  });

  it('makes /metrics public from the Metrics settings card, and private again', async () => {
    expect((await server.request('/metrics')).status).toBe(401);
    await page.goto(url('/settings/metrics'));
    const card = page.getByRole('region', { name: 'Metrics' });
    const box = card.getByRole('checkbox', { name: /may read \/metrics/ });
    expect(await box.isChecked()).toBe(false);
    await box.check();
    await card.getByRole('button', { name: 'Save metrics access' }).click();
    await card.getByText('Metrics access saved.').waitFor();
    expect((await server.request('/metrics')).status).toBe(200);
    await box.uncheck();
    await card.getByRole('button', { name: 'Save metrics access' }).click();
    await card.getByText('Metrics access saved.').waitFor();
    expect((await server.request('/metrics')).status).toBe(401);
    expect(errors).toEqual([]);
  });
});
