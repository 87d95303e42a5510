/// <reference lib="dom" />
/**
 * Name sources in the web UI (headless Chromium, the real server, a fake Pi-hole on 127.0.0.1):
 * the Settings card saves Pi-hole's address and app password (which then reads "Set" and is never
 * shown), and after a real loopback scan the device page says where its name and MAC came from.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { startFakePihole, type FakePihole } from '../helpers/name-source-fakes.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { adminWithKey, readJson, startTestServer, type TestServer } from '../helpers/server.js';
import { browserSkipReason, openUi, type UiBrowser } from '../helpers/browser.js';

const skipReason = browserSkipReason();

describe.skipIf(skipReason !== null).sequential('name sources in the web UI', () => {
  let server: TestServer;
  let browser: UiBrowser;
  let page: Page;
  let errors: string[];
  let pihole: FakePihole;
  let key: string;

  beforeAll(async () => {
    pihole = await startFakePihole({ password: 'ui-app-password' });
    server = await startTestServer(testDatabases()[0], {
      settings: { network: { subnet: '127.0.0.1/32' }, scanning: { engine: 'native', os_detection: false, max_hosts: 1 } },
    });
    const admin = await adminWithKey(server);
    key = admin.key;
    browser = await openUi(server.baseUrl, admin.cookie);
    page = browser.page;
    errors = browser.errors;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await pihole?.close();
  });

  it("saves Pi-hole's address and app password in Settings; the password is never shown again", async () => {
    await page.goto(`${server.baseUrl}/settings/names`);
    const card = page.getByRole('region', { name: 'Name sources' });
    const pi = card.getByRole('group', { name: 'Pi-hole (v6)' });
    await pi.getByLabel('Ask Pi-hole').check();
    await pi.getByLabel('Address').fill(pihole.url);
    await pi.getByLabel('App password').fill('ui-app-password');
    await card.getByRole('button', { name: 'Save name sources' }).click();
    await expect.poll(() => card.getByRole('status').textContent()).toBe('Name sources saved.');
    expect(await pi.getByLabel('App password').inputValue()).toBe('');
    await expect.poll(() => pi.textContent()).toContain('Set. Leave empty to keep it');
    const stored = await readJson(await server.request('/api/config', { key }));
    expect(stored.name_sources.pihole).toEqual({ enabled: true, url: pihole.url, password: '********' });
    expect((await server.store.settings.get()).name_sources.pihole.password).toBe('ui-app-password');
    await browser.screenshot('20-settings-name-sources');
  });

  it('shows on the device page that its name and MAC came from Pi-hole', async () => {
    const scan = await triggerScan(server, key, { subnet: '127.0.0.1/32', profile: 'quick' });
    expect((await waitForScan(server, key, scan.scan_id)).status).toBe('completed');
    const list = await readJson(await server.request('/api/devices', { key }));
    const device = (list.items ?? list).find((d: { ip_address: string }) => d.ip_address === '127.0.0.1');
    await page.goto(`${server.baseUrl}/devices/${device.id}`);
    const details = page.locator('.facts-card');
    await expect.poll(() => details.textContent()).toContain('name from Pi-hole');
    expect(await details.textContent()).toContain('MAC from Pi-hole');
    expect(await details.textContent()).toContain('raspberrypi');
    await browser.screenshot('21-device-name-from-pihole');
    expect(errors).toEqual([]);
  });
});
