/// <reference lib="dom" />
/**
 * The device page shows what answers on a port in plain words beside nmap's service name, and the
 * Settings page edits scanning.top_ports. A real scan of one loopback listener (native engine).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { testDatabases } from '../helpers/databases.js';
import { httpListener, type Listener } from '../helpers/listeners.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { adminWithKey, readJson, startTestServer, type TestServer } from '../helpers/server.js';
import { browserSkipReason, openUi, type UiBrowser } from '../helpers/browser.js';

const skipReason = browserSkipReason();

const HOST = '127.0.0.215';

describe.skipIf(skipReason !== null).sequential('web UI: service descriptions and top ports', () => {
  let server: TestServer;
  let browser: UiBrowser;
  let page: Page;
  let errors: string[];
  let key: string;
  let web: Listener;

  beforeAll(async () => {
    web = await httpListener(HOST, 'Apache/2.4.49 (Unix)');
    server = await startTestServer(testDatabases()[0], {
      settings: {
        network: { subnet: `${HOST}/32` },
        scanning: { engine: 'native', port_range: String(web.port), os_detection: false, max_hosts: 1 },
      },
    });
    const admin = await adminWithKey(server);
    key = admin.key;
    browser = await openUi(server.baseUrl, admin.cookie);
    page = browser.page;
    errors = browser.errors;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await web?.close();
  });

  const url = (path: string) => `${server.baseUrl}${path}`;

  it('shows the plain description beside the service name in the port table', async () => {
    const started = await triggerScan(server, key, { subnet: `${HOST}/32`, profile: 'normal' });
    expect((await waitForScan(server, key, started.scan_id)).status).toBe('completed');
    const [device] = await readJson(await server.request(`/api/devices?scan_id=${started.scan_id}`, { key }));
    await page.goto(url(`/devices/${device.id}`));
    const ports = page.locator('section.ports-card');
    const row = ports.getByRole('row').filter({ hasText: `${web.port}/tcp` });
    await row.waitFor();
    const service = row.getByRole('cell').nth(2);
    await expect.poll(() => service.innerText()).toMatch(/^http\s+web server \(Apache httpd 2\.4\.49\)$/);
    await browser.screenshot('svc-01-port-description');
    expect(errors).toEqual([]);
  });

  it('edits the number of most frequent ports on the Settings page', async () => {
    await page.goto(url('/settings/network'));
    const network = page.getByRole('region', { name: 'Network and scanning' });
    const field = network.getByLabel('Most frequent ports');
    await expect.poll(() => field.inputValue()).toBe('0');
    await field.fill('250');
    await network.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => network.getByRole('status').textContent()).toBe('Settings saved.');
    expect((await readJson(await server.request('/api/config', { key }))).scanning.top_ports).toBe(250);
    expect(errors).toEqual([]);
  });
});
