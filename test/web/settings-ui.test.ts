/// <reference lib="dom" />
/**
 * Settings as sub-pages and the set-up wizard's checks in Chromium against the real server (issue
 * 23 §5): each sub-page opens from the list and the menu, with one save each; the allowed scan
 * targets NETWARDEN_SCAN_ALLOW sets are read-only and name the variable; the update check is
 * disclosed and turns off; the users are listed; the backup downloads. The wizard checks the subnet
 * as it is typed (the size limit, the allowed targets), starts from the configured subnet, resumes
 * after a reload, and says what is wrong with the scan engine instead of "Everything is ready".
 * Every page at 390 px and 1440 px, light and dark.
 *
 * With NETWARDEN_SCREENSHOTS=1 it also writes docs/images/dashboard.png and device.png (1440 px,
 * light theme; the README opens with them). Without it those files are left alone.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineSelector } from '../../src/engines/engines.js';
import { browserSkipReason, openUi, type UiBrowser } from '../helpers/browser.js';
import { testDatabases } from '../helpers/databases.js';
import { startSeededServer, type Seed } from '../helpers/seed.js';
import { ADMIN, readJson, startTestServer, type TestServer } from '../helpers/server.js';

const skipReason = browserSkipReason();
const DOCS_IMAGES = join(import.meta.dirname, '..', '..', 'docs', 'images');
const WIDTHS = [390, 1440] as const;
const THEMES = ['light', 'dark'] as const;

async function noSidewaysScroll(page: Page, what: string): Promise<void> {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow, what).toBeLessThanOrEqual(1);
}

async function setTheme(page: Page, theme: string): Promise<void> {
  await page.evaluate((t) => localStorage.setItem('netwarden-theme', t), theme);
}

describe.skipIf(skipReason !== null).sequential('web UI: settings sub-pages', () => {
  let server: TestServer;
  let browser: UiBrowser;
  let page: Page;
  let cookie: string;
  let seed: Seed;

  beforeAll(async () => {
    ({ server, cookie, seed } = await startSeededServer(testDatabases()[0]));
    browser = await openUi(server.baseUrl, cookie);
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const stored = async () => readJson(await server.request('/api/config', { cookie }));
  const section = (name: string) => page.getByRole('region', { name });

  it('lists the sub-pages, and each opens with its own heading at 390 px and 1440 px in both themes', async () => {
    await page.goto(browser.url('/settings'));
    const links = page.getByRole('list', { name: 'Settings pages' }).getByRole('link');
    await expect.poll(() => links.count()).toBe(10);
    const pages = await links.evaluateAll((els) => els.map((a) => ({ href: a.getAttribute('href')!, title: a.textContent })));
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      for (const theme of THEMES) {
        await setTheme(page, theme);
        await page.goto(browser.url('/settings'));
        await links.first().waitFor();
        await noSidewaysScroll(page, `/settings at ${width} px, ${theme}`);
        await browser.screenshot(`settings-${width}-${theme}`);
        for (const { href, title } of pages) {
          await page.goto(browser.url(href));
          await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(title);
          expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(theme);
          // Let the sub-page load what it shows before measuring it.
          await page.waitForLoadState('networkidle');
          await noSidewaysScroll(page, `${href} at ${width} px, ${theme}`);
          // One save button at most: each sub-page saves on its own.
          expect(await section(title).locator('button[type=submit].primary').count(), href).toBeLessThanOrEqual(1);
          await browser.screenshot(`settings${href.replace(/\//g, '-')}-${width}-${theme}`);
        }
      }
    }
    await setTheme(page, 'light');
    await page.setViewportSize({ width: 1280, height: 900 });
  }, 240_000);

  it('shows the menu beside a sub-page on a wide screen, and only a way back on a phone', async () => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(browser.url('/settings/users'));
    const menu = page.getByRole('navigation', { name: 'Settings pages' });
    await expect.poll(() => menu.getByRole('link', { name: 'Users and password' }).getAttribute('aria-current')).toBe('page');
    await menu.getByRole('link', { name: 'Zones' }).click();
    await page.waitForURL(browser.url('/settings/zones'));
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await menu.getByRole('link', { name: 'Zones' }).isVisible()).toBe(false);
    await menu.getByRole('link', { name: '← All settings' }).click();
    await page.waitForURL(browser.url('/settings'));
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('shows the allowed scan targets NETWARDEN_SCAN_ALLOW sets as read-only, naming the variable', async () => {
    await page.goto(browser.url('/settings/network'));
    const network = section('Network and scanning');
    const targets = network.getByLabel('Allowed scan targets');
    await expect.poll(() => targets.getAttribute('readonly')).not.toBeNull();
    const lock = network.getByTestId('locked-allowed-targets');
    expect(await lock.textContent()).toContain('set by the NETWARDEN_SCAN_ALLOW environment variable');
    // The hint is the field's description, so a screen reader says it with the field.
    const described = await targets.getAttribute('aria-describedby');
    expect(described).toBeTruthy();
    // The subnet is checked as it is typed: outside the allowed targets, said under the field.
    const subnet = network.getByLabel('Subnet');
    await subnet.fill('192.168.77.0/24');
    await expect.poll(() => network.locator('.field-error').textContent()).toContain('outside the networks this server may scan');
    await subnet.fill('127.0.0.0/30');
    await expect.poll(() => network.locator('.subnet-size').textContent()).toBe('127.0.0.0/30 · 4 addresses');
  });

  it('lists the users, marking the one logged in', async () => {
    await server.store.users.create('operator', 'not-a-real-hash');
    await page.goto(browser.url('/settings/users'));
    const table = page.getByRole('table', { name: 'Users' });
    const rows = table.getByRole('row');
    await expect.poll(() => rows.count()).toBe(3);
    expect(await rows.nth(1).textContent()).toContain(`${ADMIN.username} (you)`);
    expect(await rows.nth(2).textContent()).toContain('operator');
    expect(await rows.nth(2).textContent()).not.toContain('(you)');
    // The password form is on the same sub-page.
    expect(await page.getByLabel('Current password').count()).toBe(1);
  });

  it('discloses the update check and turns it off and on with its one save', async () => {
    await page.goto(browser.url('/settings/updates'));
    const updates = section('Updates');
    const config = await stored();
    await expect.poll(() => updates.textContent()).toContain(`asks ${config.updates.feed_url} for the latest release`);
    expect(await updates.textContent()).toContain('nothing about your network or devices');
    const toggle = updates.getByRole('checkbox', { name: 'Check for new releases' });
    expect(await toggle.isChecked()).toBe(true);
    // While on, the check runs; the feed (a closed port in tests) is reported unreachable in words.
    await expect.poll(() => updates.getByRole('region', { name: 'Update status' }).textContent()).toMatch(/Could not reach the release feed/);
    await toggle.uncheck();
    await updates.getByRole('button', { name: 'Save update check' }).click();
    await expect.poll(() => updates.getByRole('status').first().textContent()).toBe('Update check turned off.');
    expect((await stored()).updates.enabled).toBe(false);
    expect(await updates.textContent()).toContain('The update check is off.');
    expect(await updates.getByRole('region', { name: 'Update status' }).count()).toBe(0);
    await toggle.check();
    await updates.getByRole('button', { name: 'Save update check' }).click();
    await expect.poll(async () => (await stored()).updates.enabled).toBe(true);
  });

  it('downloads a backup from Data and backup', async () => {
    await page.goto(browser.url('/settings/data'));
    const data = section('Data and backup');
    const [download] = await Promise.all([page.waitForEvent('download'), data.getByRole('link', { name: 'Download backup' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^netwarden-backup-\d{8}T\d{6}Z\.jsonl\.gz$/);
    expect(await download.failure()).toBeNull();
  });

  it('saves screenshots of the dashboard and a device page for the README when NETWARDEN_SCREENSHOTS=1', async () => {
    // A day in use: the inventory acknowledged but for the two devices seen last, which wait in the "New devices" inbox.
    const fresh: { id: number }[] = await readJson(await server.request('/api/devices?status=new&sort=first_seen&order=desc&limit=1000', { cookie }));
    if (fresh.length > 2) {
      const res = await server.request('/api/devices/acknowledge', { method: 'POST', cookie, json: { device_ids: fresh.slice(2).map((d) => d.id) } });
      expect(res.status, await res.clone().text()).toBe(200);
    }
    await page.setViewportSize({ width: 1440, height: 900 });
    await setTheme(page, 'light');
    await page.goto(browser.url('/'));
    await expect.poll(() => page.textContent('main')).toContain('Devices at risk');
    await expect
      .poll(() => page.getByRole('region', { name: 'New devices' }).getByRole('heading', { level: 2 }).textContent())
      .toMatch(/^New devices \(\d\)$/);
    await page.waitForLoadState('networkidle');
    const save = process.env.NETWARDEN_SCREENSHOTS === '1';
    if (save) mkdirSync(DOCS_IMAGES, { recursive: true });
    const shot = async (name: string) => {
      if (save) await page.screenshot({ path: join(DOCS_IMAGES, `${name}.png`), fullPage: false });
      else await browser.screenshot(`readme-${name}`);
    };
    await shot('dashboard');
    // The riskiest device makes the page that says most.
    const device = Object.values(seed.devices).sort((a, b) => Number(b.risk_score) - Number(a.risk_score))[0];
    await page.goto(browser.url(`/devices/${device.id}`));
    await page.getByRole('heading', { level: 1 }).waitFor();
    await page.waitForLoadState('networkidle');
    await shot('device');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('ran without page errors or Content-Security-Policy violations', () => {
    expect(browser.errors).toEqual([]);
  });
});

describe.skipIf(skipReason !== null).sequential('web UI: set-up wizard checks', () => {
  let server: TestServer;
  let browser: UiBrowser;
  let page: Page;

  beforeAll(async () => {
    server = await startTestServer(testDatabases()[0], {
      scanAllow: ['127.0.0.0/8', '10.66.0.0/24'],
      // The configured subnet (as NETWARDEN_SUBNET or the config file would set it), and a size limit to break.
      settings: { network: { subnet: '10.66.0.0/24' }, scanning: { max_hosts: 1024, engine: 'nmap' } },
      // No nmap on this server, while the configuration asks for it: every scan would fail.
      engines: new EngineSelector('/nonexistent/netwarden-test/nmap'),
    });
    browser = await openUi(server.baseUrl);
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const currentStep = () => page.getByRole('list', { name: 'Set-up steps' }).locator('[aria-current=step]').textContent();

  it('creates the account, then starts the network step from the configured subnet', async () => {
    await page.goto(browser.url('/'));
    await page.getByLabel('Username').fill(ADMIN.username);
    await page.getByLabel('Password', { exact: true }).fill(ADMIN.password);
    await page.getByLabel('Confirm password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Create account' }).click();
    const subnet = page.getByLabel('Subnet');
    await expect.poll(() => subnet.inputValue()).toBe('10.66.0.0/24');
    await expect.poll(() => page.locator('.subnet-size').textContent()).toBe('10.66.0.0/24 · 256 addresses');
  });

  it('checks the subnet against the size limit and the allowed targets as it is typed, in both widths and themes', async () => {
    const subnet = page.getByLabel('Subnet');
    const save = page.getByRole('button', { name: 'Save and continue' });
    const problem = page.locator('.field-error');
    const cases: [string, RegExp][] = [
      ['127.0.0.0/16', /^127\.0\.0\.0\/16 has 65,536 addresses, more than this server scans at once \(1,024\)/],
      [
        '192.168.1.0/24',
        /^192\.168\.1\.0\/24 is outside the networks this server may scan \(127\.0\.0\.0\/8, 10\.66\.0\.0\/24\)\..*NETWARDEN_SCAN_ALLOW/,
      ],
      ['banana', /^This is not a network/],
    ];
    for (const [text, words] of cases) {
      await subnet.fill(text);
      await expect.poll(() => problem.textContent()).toMatch(words);
      expect(await subnet.getAttribute('aria-invalid')).toBe('true');
      expect(await save.isDisabled()).toBe(true);
    }
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      for (const theme of THEMES) {
        // The theme applies at load; the reload comes back to this step (checked in the next test).
        await setTheme(page, theme);
        await page.reload();
        await expect.poll(() => subnet.inputValue()).toBe('10.66.0.0/24');
        expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(theme);
        await subnet.fill('192.168.1.0/24');
        await expect.poll(() => problem.textContent()).toContain('outside the networks');
        await noSidewaysScroll(page, `wizard at ${width} px, ${theme}`);
        await browser.screenshot(`wizard-subnet-refused-${width}-${theme}`);
      }
    }
    await setTheme(page, 'light');
    await page.setViewportSize({ width: 1280, height: 900 });
    await subnet.fill('127.0.0.0/30');
    await expect.poll(() => problem.count()).toBe(0);
    expect(await save.isDisabled()).toBe(false);
  });

  it('resumes the network step after a reload', async () => {
    await page.reload();
    await expect.poll(currentStep).toBe('Network');
    // Back to what is stored: the configured subnet.
    await expect.poll(() => page.getByLabel('Subnet').inputValue()).toBe('10.66.0.0/24');
    await page.getByLabel('Subnet').fill('127.0.0.0/30');
    await expect.poll(() => page.locator('.subnet-size').count()).toBe(1);
    await page.getByRole('button', { name: 'Save and continue' }).click();
    await expect.poll(currentStep).toBe('First scan');
    expect((await readJson(await server.request('/health'))).status).toBe('degraded');
  });

  it('says what is wrong with the scan engine instead of "Everything is ready", also after a reload', async () => {
    for (const reload of [false, true]) {
      if (reload) await page.reload();
      await expect.poll(currentStep).toBe('First scan');
      const card = page.locator('.setup-card');
      await expect.poll(() => card.getByTestId('engine-problem').textContent()).toMatch(/^nmap is not installed, and scanning\.engine is "nmap"/);
      expect(await card.textContent()).not.toContain('Everything is ready');
      expect(await card.textContent()).toContain('127.0.0.0/30');
    }
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await noSidewaysScroll(page, `first scan step at ${width} px`);
      await browser.screenshot(`wizard-engine-problem-${width}`);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByRole('button', { name: 'Skip, go to the dashboard' }).click();
    await page.waitForURL(browser.url('/'));
    // Finished: a reload is the app, not the wizard.
    await page.reload();
    await expect.poll(() => page.getByRole('navigation', { name: 'Main' }).isVisible()).toBe(true);
    expect(await page.getByRole('list', { name: 'Set-up steps' }).count()).toBe(0);
  });

  it('ran without page errors or Content-Security-Policy violations', () => {
    expect(browser.errors).toEqual([]);
  });
});
