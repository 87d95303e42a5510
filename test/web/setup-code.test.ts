/// <reference lib="dom" />
/**
 * The set-up wizard asks for the one-time set-up code when the service needs it: the browser's
 * requests carry X-Forwarded-For, as they would through a reverse proxy from another machine
 * (the only way to be "another machine" without sending traffic off this one). A wrong code is
 * refused where the user typed it; the code from the service creates the account.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { browserSkipReason, openUi, type UiBrowser } from '../helpers/browser.js';

const skipReason = browserSkipReason();

const ADMIN = { username: 'admin', password: 'a long test password' };

describe.skipIf(skipReason !== null).sequential('set-up code in the web wizard', () => {
  let server: TestServer;
  let browser: UiBrowser;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    server = await startTestServer(testDatabases()[0]);
    browser = await openUi(server.baseUrl);
    page = browser.page;
    errors = browser.errors;
    await page.setExtraHTTPHeaders({ 'X-Forwarded-For': '203.0.113.20' });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('asks for the code, refuses a wrong one, and creates the account with the right one', async () => {
    await page.goto(`${server.baseUrl}/`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Welcome to Netwarden');
    const code = page.getByLabel('Set-up code');
    await code.waitFor();
    await page.getByLabel('Username').fill(ADMIN.username);
    await page.getByLabel('Password', { exact: true }).fill(ADMIN.password);
    await page.getByLabel('Confirm password').fill(ADMIN.password);
    await code.fill('AAAA-BBBB-CCCC');
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Setup code: does not match');
    expect(await server.store.users.count()).toBe(0);
    await browser.screenshot('setup-code');

    await code.fill(server.app.services.setupCode.code!);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByLabel('Subnet').waitFor();
    expect(await server.store.users.count()).toBe(1);
    // The refused attempt (403) is the one error the console may show.
    expect(errors.filter((e) => !/status of 403/.test(e))).toEqual([]);
  });
});
