/// <reference lib="dom" />
/**
 * The set-up wizard starts from a subnet a scan would accept (issue 23 §5): with allowed scan
 * targets set (NETWARDEN_SCAN_ALLOW) and no subnet configured, it no longer opens on the default
 * 192.168.1.0/24 with an error already under it, but on the detected local network or an allowed
 * target, and says where it came from. Real server, Chromium.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { readJson, startTestServer, type TestServer } from '../helpers/server.js';
import { browserSkipReason, openUi, type UiBrowser } from '../helpers/browser.js';

const skipReason = browserSkipReason();

const ADMIN = { username: 'admin', password: 'a long test password' };

describe.skipIf(skipReason !== null).sequential('the subnet the set-up wizard starts from', () => {
  let server: TestServer;
  let browser: UiBrowser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    server = await startTestServer(testDatabases()[0], { scanAllow: ['10.66.0.0/24', '127.0.0.0/8'] });
    browser = await openUi(server.baseUrl);
    page = browser.page;
    errors = browser.errors;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('pre-fills a subnet the rules accept, says where it came from, and shows no error before anything is typed', async () => {
    expect((await server.store.settings.get()).network.subnet).toBe('192.168.1.0/24');
    await page.goto(`${server.baseUrl}/`);
    await page.getByLabel('Username').fill(ADMIN.username);
    await page.getByLabel('Password', { exact: true }).fill(ADMIN.password);
    await page.getByLabel('Confirm password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Create account' }).click();
    const field = page.getByLabel('Subnet');
    await field.waitFor();
    await expect.poll(() => field.inputValue()).not.toBe('');
    const value = await field.inputValue();
    expect(value).not.toBe('192.168.1.0/24');
    // The same answer the API gives, which passes the check the field makes as it is typed.
    const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const suggestion = await readJson(await server.request('/api/network/suggestion', { headers: { cookie } }));
    expect(suggestion.subnet).toBe(value);
    expect(['detected', 'allowed_targets']).toContain(suggestion.source);
    await expect.poll(() => page.locator('form').textContent()).toContain(suggestion.detail);
    // The size shows once the check answered; no error under the field, and Save is there to press.
    await expect.poll(() => page.locator('.subnet-size').textContent()).toMatch(/address/);
    expect(await field.getAttribute('aria-invalid')).toBeNull();
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Save and continue' }).isEnabled()).toBe(true);
    await browser.screenshot('setup-subnet');

    // Typing a subnet outside the allowed targets still shows the error, and the hint goes.
    await field.fill('192.168.1.0/24');
    await expect.poll(() => field.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('form').textContent()).not.toContain(suggestion.detail);
    expect(errors).toEqual([]);
  });
});
