/// <reference lib="dom" />
/**
 * The web UI in a real browser (headless Chromium) against the real server, over a real scan of
 * a loopback address: set-up → login → scan → devices → edit → API keys → dark mode → escaping.
 * Screenshots of each main page land in test-results/ui/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { testDatabases } from '../helpers/databases.js';
import { bannerListener, httpListener, type Listener } from '../helpers/listeners.js';
import { readJson, startTestServer, type TestServer } from '../helpers/server.js';
import { browserSkipReason, openUi, type UiBrowser } from '../helpers/browser.js';

const skipReason = browserSkipReason();

const HOST = '127.0.0.41';
const ADMIN = { username: 'admin', password: 'a long test password' };
const XSS_LABEL = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">';

describe.skipIf(skipReason !== null).sequential('web UI in Chromium', () => {
  let server: TestServer;
  let browser: UiBrowser;
  let page: Page;
  let errors: string[];
  let ftp: Listener;
  let http: Listener;
  let deviceId: number;

  beforeAll(async () => {
    ftp = await bannerListener(HOST, '220 (vsFTPd 2.3.4)\r\n');
    http = await httpListener(HOST, 'nginx/1.18.0');
    server = await startTestServer(testDatabases()[0], {
      settings: {
        // max_hosts 1: whatever the wizard is given, nothing wider than one address is ever scanned.
        network: { subnet: `${HOST}/32` },
        scanning: { port_range: `${ftp.port},${http.port}`, os_detection: false, max_hosts: 1 },
      },
    });
    browser = await openUi(server.baseUrl);
    page = browser.page;
    errors = browser.errors;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await ftp?.close();
    await http?.close();
  });

  const url = (path: string) => `${server.baseUrl}${path}`;
  const heading = () => page.getByRole('heading', { level: 1 });

  it('walks through first-run set-up: account, subnet with detect, first scan', async () => {
    await page.goto(url('/'));
    await expect.poll(() => heading().textContent()).toBe('Welcome to Netwarden');
    await browser.screenshot('01-setup-account');

    await page.getByLabel('Username').fill(ADMIN.username);
    await page.getByLabel('Password', { exact: true }).fill(ADMIN.password);
    await page.getByLabel('Confirm password').fill('something else entirely');
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('The two passwords differ');

    await page.getByLabel('Confirm password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Create account' }).click();

    const subnet = page.getByLabel('Subnet');
    await subnet.waitFor();
    await page.getByRole('button', { name: 'Detect' }).click();
    // Detection reads this machine's interfaces and fills in a suggestion.
    await expect.poll(() => subnet.inputValue()).toMatch(/^\d+\.\d+\.\d+\.\d+\/\d+$/);
    // Checked as it is typed, against the server's rules, in plain words under the field.
    await subnet.fill('not a subnet');
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/^This is not a network: /);
    expect(await page.getByRole('button', { name: 'Save and continue' }).isDisabled()).toBe(true);
    await subnet.fill(`${HOST}/32`);
    expect(await subnet.inputValue()).toBe(`${HOST}/32`);
    await browser.screenshot('02-setup-network');
    await page.getByRole('button', { name: 'Save and continue' }).click();

    await page.getByRole('button', { name: 'Start first scan' }).waitFor();
    await page.getByLabel('Profile').selectOption('normal');
    await page.getByRole('button', { name: 'Start first scan' }).click();
    await page.waitForURL(/\/scans\?scan=\d+$/);
  });

  it('shows the scan running and its result with links to devices and changes', async () => {
    await expect.poll(() => heading().textContent()).toBe('Scans');
    // Progress or, for a fast scan, the finished result: the scan must end on its own.
    const result = page.getByRole('region', { name: 'Scan result' });
    await result.getByRole('link', { name: 'View devices' }).waitFor({ timeout: 120_000 });
    await expect.poll(() => result.textContent()).toContain('Completed');
    await browser.screenshot('03-scan-result');
    const cookie = await sessionCookie(page);
    const scans = await readJson(await server.request('/api/scans', { cookie }));
    expect(scans).toHaveLength(1);
    expect(scans[0]).toMatchObject({ status: 'completed', subnet: `${HOST}/32`, devices_found: 1 });
    // The result card says at a glance what the scan found: devices (how many new), changes, and new risks (high or critical changes).
    const changes: any[] = await readJson(await server.request(`/api/changes?scan_id=${scans[0].scan_id}&limit=1000`, { cookie }));
    const added = changes.filter((c) => c.change_type === 'device_added').length;
    const risks = changes.filter((c) => c.severity === 'critical' || c.severity === 'high').length;
    const found = result.getByRole('list', { name: 'What the scan found' });
    await expect
      .poll(() => found.locator('li').allTextContents())
      .toEqual([
        `1 device${added > 0 ? ` (${added} new)` : ''}`,
        `${changes.length} change${changes.length === 1 ? '' : 's'}`,
        `${risks} new risk${risks === 1 ? '' : 's'}`,
      ]);
  });

  it('logs out, refuses a wrong password with a readable message, and logs in', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await expect.poll(() => heading().textContent()).toBe('Log in to Netwarden');
    await page.getByLabel('Username').fill(ADMIN.username);
    await page.getByLabel('Password').fill('wrong password here');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Invalid username or password');
    await browser.screenshot('04-login-error');
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => heading().textContent()).toBe('Dashboard');
  });

  it('shows the dashboard with tiles from the stats', async () => {
    await page.goto(url('/'));
    // The sections load on their own; the device at risk shows once its list has arrived.
    await expect.poll(() => page.textContent('main')).toContain('Devices at risk');
    await expect.poll(() => page.textContent('main')).toContain(HOST);
    await page.waitForLoadState('networkidle');
    await browser.screenshot('05-dashboard');
  });

  it('lists the scanned device and opens its detail with ports, risk and CVEs', async () => {
    await page.goto(url('/devices'));
    const link = page.getByRole('link', { name: HOST, exact: true });
    await link.waitFor();
    await browser.screenshot('06-devices');
    await link.click();
    await page.waitForURL(/\/devices\/\d+$/);
    deviceId = Number(new URL(page.url()).pathname.split('/').pop());
    const main = page.locator('main');
    await expect.poll(() => main.textContent()).toContain(String(ftp.port));
    const text = (await main.textContent()) ?? '';
    expect(text).toContain(String(http.port));
    expect(text).toContain('CVE-2011-2523');
    expect(text).toMatch(/critical/i);
    await browser.screenshot('07-device-detail');
  });

  it('edits label, zone, trust and notes; a label with markup renders as text', async () => {
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByLabel('Label').fill(XSS_LABEL);
    await page.getByLabel('Zone').selectOption('Servers');
    await page.getByLabel('Trusted').check();
    await page.getByLabel('Notes').fill('line one\n<b>not bold</b>');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => heading().textContent()).toBe(XSS_LABEL);

    const stored = await readJson(await server.request(`/api/devices/${deviceId}`, { cookie: await sessionCookie(page) }));
    expect(stored).toMatchObject({ label: XSS_LABEL, zone: 'Servers', is_trusted: true, notes: 'line one\n<b>not bold</b>' });

    // No element came from the markup, no script ran: here and in the device list.
    expect(await page.evaluate(() => (window as { __xss?: number }).__xss)).toBeUndefined();
    expect(await page.locator('main b').count()).toBe(0);
    expect(await page.locator('main img[src="x"]').count()).toBe(0);
    await expect.poll(() => page.textContent('main')).toContain('<b>not bold</b>');
    await browser.screenshot('08-device-edited');

    await page.goto(url('/devices'));
    await page.getByText(XSS_LABEL).first().waitFor();
    expect(await page.locator('main img[src="x"]').count()).toBe(0);
    expect(await page.evaluate(() => (window as { __xss?: number }).__xss)).toBeUndefined();
  });

  it('shows API errors as readable messages', async () => {
    // The old address of the Scan page leads to the Scans page.
    await page.goto(url('/scan'));
    await page.waitForURL(url('/scans'));
    await page.getByLabel('Subnet').fill('banana');
    await page.getByRole('button', { name: 'Start scan' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/^Subnet: /);
  });

  it('follows a running scan live, cancels it, then runs one to the end', async () => {
    await page.goto(url('/scans'));
    await page.getByLabel('Subnet').fill('');
    await page.getByRole('button', { name: 'Start scan' }).click();
    // Service detection on the two listeners takes several seconds: time to see progress and cancel.
    const progress = page.getByRole('progressbar', { name: 'Scan progress' });
    await progress.waitFor();
    // The attribute must be there and hold a percentage (Number(null) would pass a bare >= 0).
    const valueNow = await progress.getAttribute('aria-valuenow');
    expect(valueNow).toMatch(/^\d+(\.\d+)?$/);
    expect(Number(valueNow)).toBeLessThanOrEqual(100);
    await expect.poll(() => page.textContent('main')).toMatch(/Phase.*Hosts.*Elapsed.*Time left/s);
    // The elapsed time moves on its own between the scan's progress events.
    const elapsed = page.getByRole('region', { name: 'Running scan' }).locator('dt:text-is("Elapsed") + dd');
    const firstElapsed = await elapsed.textContent();
    await expect.poll(() => elapsed.textContent(), { timeout: 10_000 }).not.toBe(firstElapsed);
    await browser.screenshot('09-scan-running');
    await page.getByRole('button', { name: 'Cancel scan', exact: true }).click();
    const result = page.getByRole('region', { name: 'Scan result' });
    await result.getByRole('link', { name: 'View devices' }).waitFor();
    // Cancelled on purpose: a neutral badge, no error message.
    await expect.poll(() => result.locator('.badge').textContent()).toBe('Cancelled');
    expect(await result.locator('.badge').getAttribute('class')).toContain('status-cancelled');
    expect(await page.getByRole('alert').count()).toBe(0);
    await browser.screenshot('09a-scan-cancelled');

    await page.getByRole('button', { name: 'Start scan' }).click();
    await progress.waitFor();
    await result.getByRole('link', { name: 'View devices' }).waitFor({ timeout: 120_000 });
    await expect.poll(() => result.textContent()).toContain('Completed');
    const scans = await readJson(await server.request('/api/scans', { cookie: await sessionCookie(page) }));
    expect(scans.map((s: { status: string }) => s.status)).toEqual(['completed', 'cancelled', 'completed']);
  });

  it('shows scan history and changes', async () => {
    await page.goto(url('/scans'));
    await page.getByRole('link', { name: 'Devices' }).first().waitFor();
    await browser.screenshot('10-scans');
    await page.goto(url('/changes'));
    await expect.poll(() => page.textContent('main')).toMatch(/No changes|device_added|Device added/i);
    await browser.screenshot('11-changes');
  });

  it('creates an API key shown once, which works until it is revoked', async () => {
    await page.goto(url('/settings/keys'));
    await page.getByLabel('Key name').fill('grafana');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = page.getByTestId('new-api-key');
    await secret.waitFor();
    const key = ((await secret.textContent()) ?? '').trim();
    expect(key).toMatch(/^svc_[A-Za-z0-9_-]{43,45}$/);
    await browser.screenshot('12-api-key-created');
    expect((await server.request('/api/stats', { key })).status).toBe(200);
    await page.getByRole('button', { name: 'Done' }).click();
    // Shown once: gone from the page after the dialog closes.
    expect(await page.getByText(key).count()).toBe(0);

    await page.getByRole('button', { name: 'Revoke grafana' }).click();
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await expect.poll(() => page.locator('main').textContent()).toMatch(/revoked/i);
    expect((await server.request('/api/stats', { key })).status).toBe(401);
    await browser.screenshot('13-settings');
  });

  it("edits Settings one sub-page at a time, with a locked setting read-only and the API's refusals under their fields", async () => {
    const cookie = await sessionCookie(page);
    const stored = async () => readJson(await server.request('/api/config', { cookie }));
    await page.goto(url('/settings'));
    await page.getByRole('list', { name: 'Settings pages' }).getByRole('link', { name: 'Network and scanning' }).click();
    await page.waitForURL(url('/settings/network'));
    const network = page.getByRole('region', { name: 'Network and scanning' });
    const targets = network.getByLabel('Allowed scan targets');
    // This server runs with NETWARDEN_SCAN_ALLOW: the field shows that list, as enforced, read-only, naming the variable.
    await expect.poll(() => targets.inputValue()).toBe('127.0.0.0/8\n10.66.0.0/24');
    await expect.poll(() => targets.getAttribute('readonly')).not.toBeNull();
    expect(await network.getByTestId('locked-allowed-targets').textContent()).toContain('NETWARDEN_SCAN_ALLOW');
    await browser.screenshot('13a-settings-allowed-targets-locked');

    // A refusal shows under the field it is about, in words (no setting path), and not again above the button.
    const portRange = network.getByLabel('Port range');
    const ports = (await stored()).scanning.port_range;
    await portRange.fill('banana');
    await network.getByRole('button', { name: 'Save settings' }).click();
    const fieldError = network.locator('.field-error');
    await expect.poll(() => fieldError.count()).toBe(1);
    expect(await fieldError.textContent()).not.toMatch(/scanning\./);
    expect(await network.getByRole('alert').count()).toBe(1);
    expect(await portRange.getAttribute('aria-invalid')).toBe('true');
    await portRange.fill(ports);

    // The rest of the form saves with the locked list left as it is.
    await network.getByLabel('Host timeout (seconds)').fill('60');
    await network.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => network.getByRole('status').textContent()).toBe('Settings saved.');
    expect((await stored()).scanning.host_timeout_seconds).toBe(60);
    expect((await stored()).scanning.allowed_targets).toEqual(['127.0.0.0/8', '10.66.0.0/24']);

    // The menu beside the sub-page leads to the others; each has its own save.
    await page.getByRole('navigation', { name: 'Settings pages' }).getByRole('link', { name: 'Data and backup' }).click();
    await page.waitForURL(url('/settings/data'));
    const data = page.getByRole('region', { name: 'Data and backup' });
    const days = data.getByLabel('Keep history for (days)');
    await expect.poll(async () => days.inputValue()).toBe(String((await stored()).retention.days));
    await days.fill('0');
    await data.getByRole('button', { name: 'Save retention' }).click();
    await expect.poll(() => data.getByRole('status').textContent()).toBe('Retention saved.');
    await expect.poll(() => data.textContent()).toContain('Now: everything is kept.');
    expect((await stored()).retention).toEqual({ days: 0 });
    await days.fill('30');
    await data.getByRole('button', { name: 'Save retention' }).click();
    await expect.poll(() => data.textContent()).toContain('Now: history older than 30 days is deleted.');
    expect((await stored()).retention).toEqual({ days: 30 });
    expect(await data.getByRole('link', { name: 'Download backup' }).getAttribute('href')).toBe('/api/backup');
    await browser.screenshot('13b-settings-data');
  });

  it('switches to dark mode, and keeps it after a reload', async () => {
    await page.goto(url('/'));
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const light = await background();
    const toggle = page.getByRole('button', { name: /^Theme: / });
    const name = () => toggle.getAttribute('aria-label');
    for (let i = 0; i < 3 && (await name()) !== 'Theme: dark'; i++) await toggle.click();
    expect(await name()).toBe('Theme: dark');
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    expect(await background()).not.toBe(light);
    await page.reload();
    await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    await expect.poll(() => page.textContent('main')).toContain('Devices at risk');
    // Two completed network scans: the trend charts have their two points.
    await page.getByRole('img', { name: /^Devices: All 1, At risk 1/ }).waitFor();
    await browser.screenshot('14-dashboard-dark');
    await page.goto(url(`/devices/${deviceId}`));
    await heading().waitFor();
    await browser.screenshot('15-device-detail-dark');
  });

  it('fits a phone screen without sideways scrolling of the page', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [path, name] of [
      ['/', '16-phone-dashboard'],
      ['/devices', '17-phone-devices'],
      ['/settings', '18-phone-settings'],
      ['/settings/network', '18a-phone-settings-network'],
    ]) {
      await page.goto(url(path));
      await heading().waitFor();
      await page.waitForLoadState('networkidle');
      await browser.screenshot(name);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      // On failure, name the elements that stick out, to say what to fix.
      const wide = overflow > 1 ? await page.evaluate(widestElements) : [];
      expect(overflow, `${path}: ${wide.join(', ')}`).toBeLessThanOrEqual(1);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('ran without page errors or Content-Security-Policy violations', () => {
    expect(errors).toEqual([]);
  });
});

/** Elements reaching past the right edge of the window, innermost first (runs in the page). */
function widestElements(): string[] {
  const out: string[] = [];
  for (const el of Array.from(document.querySelectorAll('body *'))) {
    const right = el.getBoundingClientRect().right;
    if (right > window.innerWidth + 1 && !Array.from(el.children).some((c) => c.getBoundingClientRect().right >= right)) {
      out.push(`${el.tagName.toLowerCase()}.${el.className} (${Math.round(right)}px)`);
    }
  }
  return out.slice(0, 5);
}

async function sessionCookie(page: Page): Promise<string> {
  const cookies = await page.context().cookies();
  const session = cookies.find((c) => c.name === 'netwarden_session');
  if (!session) throw new Error('no session cookie in the browser');
  return `${session.name}=${session.value}`;
}
