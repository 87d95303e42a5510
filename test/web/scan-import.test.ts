/// <reference lib="dom" />
/**
 * The Scans page's "Import nmap report" form in Chromium against the real server: a recorded nmap
 * report uploaded with the session becomes a completed scan shown with its result and warnings,
 * and a truncated one shows the server's refusal.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { testDatabases } from '../helpers/databases.js';
import { adminWithKey, readJson, startTestServer, type TestServer } from '../helpers/server.js';
import { browserSkipReason, openUi, type UiBrowser } from '../helpers/browser.js';

const skipReason = browserSkipReason();

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'nmap-import');

describe.skipIf(skipReason !== null).sequential('web UI: importing an nmap report', () => {
  let server: TestServer;
  let browser: UiBrowser;
  let page: Page;
  let errors: string[];
  let key: string;

  beforeAll(async () => {
    server = await startTestServer(testDatabases()[0], { settings: { network: { subnet: '127.0.0.1/32' } } });
    const admin = await adminWithKey(server);
    key = admin.key;
    browser = await openUi(server.baseUrl, admin.cookie);
    page = browser.page;
    errors = browser.errors;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('uploads a report: the scan is shown with its warnings and listed in the history', async () => {
    await page.goto(`${server.baseUrl}/scans`);
    const form = page.getByRole('form', { name: 'Import nmap report' });
    await expect.poll(() => form.getByRole('button', { name: 'Import report' }).isDisabled()).toBe(true);
    await form.getByLabel('Report file').setInputFiles(join(FIXTURES, 'mixed-ipv6.xml'));
    await form.getByRole('button', { name: 'Import report' }).click();

    const result = page.getByRole('region', { name: 'Scan result' });
    await expect.poll(() => result.textContent(), { timeout: 15_000 }).toContain('127.0.0.20/30');
    const text = (await result.textContent()) ?? '';
    expect(text).toContain('import');
    expect(text).toContain('Skipped IPv6 host ::1 (up)');
    const scans = await readJson(await server.request('/api/scans', { key }));
    expect(scans).toHaveLength(1);
    expect(scans[0]).toMatchObject({ status: 'completed', triggered_by: 'import', devices_found: 4 });
    await expect.poll(() => page.getByRole('table', { name: 'Scan history' }).getByRole('row').count()).toBe(2);
    await browser.screenshot('scans-import');
  });

  it('shows the refusal of a truncated report', async () => {
    const form = page.getByRole('form', { name: 'Import nmap report' });
    const xml = readFileSync(join(FIXTURES, 'loopback-sv-1.xml'));
    await form.getByLabel('Report file').setInputFiles({ name: 'cut.xml', mimeType: 'text/xml', buffer: xml.subarray(0, 1500) });
    await form.getByRole('button', { name: 'Import report' }).click();
    await expect.poll(() => form.getByRole('alert').textContent()).toMatch(/^Not well-formed XML at line \d+/);
    expect((await readJson(await server.request('/api/scans', { key }))).length).toBe(1);
    expect(errors).toEqual([]);
  });
});
