/// <reference lib="dom" />
/**
 * Schedules and notification settings in Chromium against the real server: the schedule form
 * (presets, a custom cron with its next runs, a bad cron's 400 detail), run now and the queue on
 * the Scans page, a webhook channel aimed at a loopback receiver with Test and the delivery log,
 * a failing channel highlighted, and the settings that came with them. Scans only ever reach
 * 127.0.0.0/8.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { testDatabases } from '../helpers/databases.js';
import { waitForScan } from '../helpers/scans.js';
import { adminWithKey, readJson, startTestServer, type TestServer } from '../helpers/server.js';
import { browserSkipReason, openUi, type UiBrowser } from '../helpers/browser.js';
import { silentListener, webhookReceiver, type Receiver } from './receivers.js';
import type { Listener } from '../helpers/listeners.js';

const skipReason = browserSkipReason();

const LOOPBACK = '127.0.0.1';
/** Holds a listener that never answers, so that a scan of it runs until cancelled. */
const SLOW_HOST = '127.0.0.43';

describe.skipIf(skipReason !== null).sequential('web UI: schedules and notifications', () => {
  let server: TestServer;
  let browser: UiBrowser;
  let page: Page;
  let errors: string[];
  let key: string;
  let silent: Listener;
  let receiver: Receiver;

  beforeAll(async () => {
    silent = await silentListener(SLOW_HOST);
    receiver = await webhookReceiver(LOOPBACK);
    server = await startTestServer(testDatabases()[0], {
      settings: {
        network: { subnet: `${LOOPBACK}/32` },
        scanning: { port_range: String(silent.port), os_detection: false, max_hosts: 1 },
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
    await silent?.close();
    await receiver?.close();
  });

  const url = (path: string) => `${server.baseUrl}${path}`;
  const json = async (path: string) => readJson(await server.request(path, { key }));

  it('creates a schedule from a preset, shows next runs for a custom cron and the API’s reason for a bad one', async () => {
    await page.goto(url('/schedules'));
    await page.getByRole('button', { name: 'New schedule' }).click();
    const form = page.getByRole('region', { name: 'New schedule' });
    await form.getByLabel('Name').fill('Nightly loopback');
    // A preset: no cron to type, and its next five runs are listed.
    await form.getByLabel('When').selectOption('Daily at 03:00');
    const runs = form.getByRole('list', { name: 'Next runs' }).getByRole('listitem');
    await expect.poll(() => runs.count()).toBe(5);
    expect(await form.getByLabel('Cron expression').count()).toBe(0);
    // The time zone starts as the browser's own (UTC in these tests).
    expect(await form.getByLabel('Time zone').inputValue()).toBe('UTC');

    await form.getByLabel('When').selectOption('custom');
    const cron = form.getByLabel('Cron expression');
    await cron.fill('*/15 * * * *');
    // The list follows the typing: five runs a quarter of an hour apart.
    const gaps = async () => {
      const times = await form
        .getByRole('list', { name: 'Next runs' })
        .locator('time')
        .evaluateAll((els) => els.map((e) => new Date(e.getAttribute('datetime')!).getTime()));
      return times.slice(1).map((t, i) => t - times[i]);
    };
    await expect.poll(gaps).toEqual([15, 15, 15, 15].map((m) => m * 60_000));

    await cron.fill('61 * * * *');
    const reason = form.getByRole('alert');
    // Under the field, in words, without the parameter's name.
    await expect.poll(() => reason.textContent()).toMatch(/minute|61/i);
    expect(await reason.textContent()).not.toMatch(/^cron:/);
    // Saving it anyway gives the same reason once, not a second copy above the form.
    await form.getByRole('button', { name: 'Create schedule' }).click();
    await expect.poll(() => form.getByRole('button', { name: 'Create schedule' }).isEnabled()).toBe(true);
    expect(await form.getByRole('alert').count()).toBe(1);
    await browser.screenshot('s01-schedule-bad-cron');

    await cron.fill('30 2 * * 1');
    await expect.poll(() => runs.count()).toBe(5);
    await form.getByLabel('Time zone').fill('Europe/Berlin');
    await form.getByLabel('Subnet').fill(`${LOOPBACK}/32`);
    await form.getByLabel('Profile').selectOption('quick');
    await form.getByRole('button', { name: 'Create schedule' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('Schedule “Nightly loopback” created.');

    const [stored] = await json('/api/schedules');
    expect(stored).toMatchObject({
      name: 'Nightly loopback',
      cron: '30 2 * * 1',
      timezone: 'Europe/Berlin',
      subnet: `${LOOPBACK}/32`,
      profile: 'quick',
      enabled: true,
    });
    expect(stored.next_run_at).not.toBeNull();
    const row = page.getByRole('table', { name: 'Schedules' }).getByRole('row').filter({ hasText: 'Nightly loopback' });
    await expect.poll(() => row.textContent()).toContain('Europe/Berlin');
    await browser.screenshot('s02-schedules');

    // Off and on again from the list.
    await row.getByRole('checkbox', { name: 'Enabled: Nightly loopback' }).uncheck();
    await expect.poll(async () => (await json('/api/schedules'))[0].enabled).toBe(false);
    await expect.poll(() => row.textContent()).toContain('disabled');
    await row.getByRole('checkbox', { name: 'Enabled: Nightly loopback' }).check();
    await expect.poll(async () => (await json('/api/schedules'))[0].enabled).toBe(true);

    // Editing keeps the custom cron in the custom field.
    await row.getByRole('button', { name: 'Edit Nightly loopback' }).click();
    const edit = page.getByRole('region', { name: 'Edit Nightly loopback' });
    expect(await edit.getByLabel('Cron expression').inputValue()).toBe('30 2 * * 1');
    await edit.getByRole('button', { name: 'Cancel' }).click();
  });

  it('runs a schedule now; while another scan runs its run is queued and can be cancelled from the Scans page', async () => {
    const [schedule] = await json('/api/schedules');
    const slow = await readJson(await server.request(`/api/scan/trigger?profile=normal&subnet=${SLOW_HOST}/32`, { method: 'POST', key }));
    try {
      await page.goto(url('/schedules'));
      const row = page.getByRole('table', { name: 'Schedules' }).getByRole('row').filter({ hasText: schedule.name });
      await row.getByRole('button', { name: `Run ${schedule.name} now` }).click();
      await expect.poll(() => page.getByRole('status').first().textContent()).toMatch(/is queued as scan #\d+/);
      const queuedId = Number((await page.getByRole('status').first().textContent())!.match(/#(\d+)/)![1]);

      await page.goto(url('/scans'));
      const history = page.getByRole('table', { name: 'Scan history' });
      const queuedRow = history.getByRole('row').filter({ hasText: new RegExp(`^${queuedId}`) });
      await expect.poll(() => queuedRow.locator('.badge').textContent()).toBe('Queued');
      expect(await queuedRow.textContent()).toContain('waiting');
      await browser.screenshot('s03-scans-queued');
      await queuedRow.getByRole('button', { name: `Cancel scan #${queuedId}` }).click();
      await expect.poll(() => queuedRow.locator('.badge').textContent()).toBe('Cancelled');
      expect((await json(`/api/scans/${queuedId}`)).status).toBe('cancelled');
    } finally {
      await server.request(`/api/scans/${slow.scan_id}/cancel`, { method: 'POST', key });
      await waitForScan(server, key, slow.scan_id);
    }
  });

  it('deletes a schedule after asking', async () => {
    const [schedule] = await json('/api/schedules');
    await page.goto(url('/schedules'));
    await page.getByRole('button', { name: `Delete ${schedule.name}` }).click();
    await page.getByRole('dialog', { name: 'Delete schedule' }).getByRole('button', { name: 'Delete schedule' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('deleted');
    expect(await json('/api/schedules')).toEqual([]);
  });

  it('adds a webhook channel aimed at a loopback receiver; Test reaches it and the delivery log shows it', async () => {
    await page.goto(url('/settings/notifications'));
    const section = page.getByRole('region', { name: 'Notifications' });
    await section.getByLabel('Channel type').selectOption('webhook');
    await section.getByRole('button', { name: 'Add channel' }).click();
    const form = section.getByRole('form', { name: 'New Webhook channel' });
    await form.getByLabel('Name').fill('Receiver');
    await form.getByLabel('URL').fill(`http://${LOOPBACK}:${receiver.port}/hook`);
    await form.getByLabel('Signing secret').fill('s3cret');
    await form.getByLabel('Minimum severity').selectOption('medium');
    await form.getByRole('checkbox', { name: 'completes' }).check();
    // Device events (none by default): the new-device message.
    const deviceEvents = form.getByRole('group', { name: 'Device events' });
    expect(await deviceEvents.getByRole('checkbox', { checked: true }).count()).toBe(0);
    await deviceEvents.getByRole('checkbox', { name: 'a new device appears' }).check();
    await form.getByRole('button', { name: 'Add channel' }).click();
    await expect.poll(() => section.getByRole('status').first().textContent()).toContain('Channel “Receiver” added.');

    const [channel] = await json('/api/notifications/channels');
    expect(channel).toMatchObject({ name: 'Receiver', type: 'webhook', enabled: true, config: { secret: '********' } });
    expect(channel.filters).toMatchObject({ min_severity: 'medium', scan_events: ['failed', 'completed'], events: ['device.new'] });

    const item = section.getByRole('listitem').filter({ has: page.getByText('Receiver', { exact: true }) });
    await item.getByRole('button', { name: 'Test Receiver' }).click();
    await expect.poll(() => item.getByRole('status').textContent()).toBe('Test message delivered.');
    expect(receiver.received).toHaveLength(1);
    const [message] = receiver.received;
    expect(message.path).toBe('/hook');
    expect(message.headers['x-netwarden-event']).toBe('test');
    expect(message.headers['x-netwarden-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);

    const log = section.getByRole('table', { name: 'Deliveries' });
    const first = log.getByRole('row').nth(1);
    await expect.poll(() => first.textContent()).toContain('Sent');
    expect(await first.textContent()).toContain('test');
    expect(await first.textContent()).toContain('Receiver');
    await browser.screenshot('s04-notifications');

    // The stored secret shows the mask in its password input; saving without typing it keeps it.
    await section.getByRole('button', { name: 'Edit Receiver' }).click();
    const edit = section.getByRole('form', { name: 'Edit “Receiver”' });
    expect(await edit.getByLabel('Signing secret').getAttribute('type')).toBe('password');
    expect(await edit.getByLabel('Signing secret').getAttribute('placeholder')).toBe('********');
    expect(await edit.getByLabel('Signing secret').inputValue()).toBe('');
    // The device events shown as saved; a watched device going offline added.
    const editEvents = edit.getByRole('group', { name: 'Device events' });
    expect(await editEvents.getByRole('checkbox', { name: 'a new device appears' }).isChecked()).toBe(true);
    await editEvents.getByRole('checkbox', { name: 'a watched device goes offline' }).check();
    await edit.getByRole('button', { name: 'Save channel' }).click();
    await expect.poll(() => section.getByRole('status').first().textContent()).toContain('saved');
    expect((await json('/api/notifications/channels'))[0].filters.events).toEqual(['device.new', 'device.offline']);
    await section.getByRole('button', { name: 'Test Receiver' }).click();
    await expect.poll(() => receiver.received.length).toBe(2);
    // Still signed: the secret was kept.
    expect(receiver.received[1].headers['x-netwarden-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
  });

  it('shows a failing channel’s test result and highlights the failure in the delivery log', async () => {
    await page.goto(url('/settings/notifications'));
    const section = page.getByRole('region', { name: 'Notifications' });
    await section.getByLabel('Channel type').selectOption('webhook');
    await section.getByRole('button', { name: 'Add channel' }).click();
    const form = section.getByRole('form', { name: 'New Webhook channel' });
    await form.getByLabel('Name').fill('Refusing');
    // The receiver answers 404 on this path: a 4xx is not retried, so the delivery fails at once.
    await form.getByLabel('URL').fill(`http://${LOOPBACK}:${receiver.port}/missing`);
    await form.getByRole('button', { name: 'Add channel' }).click();
    await section.getByRole('button', { name: 'Test Refusing' }).click();
    await expect.poll(() => section.getByRole('alert').first().textContent()).toMatch(/^Test message failed: .*404/);
    const failed = section.getByRole('table', { name: 'Deliveries' }).locator('tr.delivery-failed');
    await expect.poll(() => failed.count()).toBe(1);
    expect(await failed.textContent()).toContain('Refusing');
    expect(await failed.textContent()).toContain('404');
    // One failure is not yet a pattern; a second in a row flags the channel on the list.
    const refusing = section.getByRole('list', { name: 'Notification channels' }).getByRole('listitem').filter({ hasText: 'Refusing' });
    expect(await refusing.locator('.badge', { hasText: 'Failing' }).count()).toBe(0);
    await section.getByRole('button', { name: 'Test Refusing' }).click();
    await expect.poll(() => failed.count()).toBe(2);
    await expect.poll(() => refusing.locator('.badge', { hasText: 'Failing' }).count()).toBe(1);
    expect(await refusing.locator('.channel-failing').textContent()).toMatch(/^The last 2 deliveries failed: .*404/);
    await browser.screenshot('s05a-notifications-failing-channel');

    // Disabled and deleted from the list.
    await section.getByRole('checkbox', { name: 'Enabled: Refusing' }).uncheck();
    await expect
      .poll(async () => (await json('/api/notifications/channels')).find((c: { name: string }) => c.name === 'Refusing').enabled)
      .toBe(false);
    await section.getByRole('button', { name: 'Delete Refusing' }).click();
    await page.getByRole('dialog', { name: 'Delete channel' }).getByRole('button', { name: 'Delete channel' }).click();
    await expect.poll(async () => (await json('/api/notifications/channels')).map((c: { name: string }) => c.name)).toEqual(['Receiver']);
    await browser.screenshot('s05-notifications-failed');
  });

  it('builds the email form from the OpenAPI channel config: defaults, a password input, the TLS fields', async () => {
    await page.goto(url('/settings/notifications'));
    const section = page.getByRole('region', { name: 'Notifications' });
    await section.getByLabel('Channel type').selectOption('email');
    await section.getByRole('button', { name: 'Add channel' }).click();
    const form = section.getByRole('form', { name: 'New Email channel' });
    expect(await form.getByLabel('SMTP server', { exact: true }).getAttribute('required')).not.toBeNull();
    expect(await form.getByLabel('Port', { exact: true }).inputValue()).toBe('587');
    expect(await form.getByLabel('Password', { exact: true }).getAttribute('type')).toBe('password');
    expect(await form.getByLabel('Trusted certificate (PEM)', { exact: true }).evaluate((e) => e.tagName)).toBe('TEXTAREA');
    expect(await form.getByRole('checkbox', { name: 'Verify the server certificate' }).isChecked()).toBe(true);
    expect(await form.getByRole('checkbox', { name: 'Implicit TLS (port 465)' }).isChecked()).toBe(false);
    await form.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => section.getByRole('form').count()).toBe(0);
  });

  it('saves the public address and when devices count as offline with the other settings', async () => {
    await page.goto(url('/settings/network'));
    const network = page.getByRole('region', { name: 'Network and scanning' });
    await network.getByLabel('Offline after missed scans').fill('3');
    const publicUrl = network.getByLabel('Public address of Netwarden');
    const hasPublicUrl = (await publicUrl.count()) > 0;
    if (hasPublicUrl) await publicUrl.fill('https://netwarden.example.lan');
    await network.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => network.getByRole('status').textContent()).toBe('Settings saved.');
    const config = await json('/api/config');
    expect(config.presence.offline_after_scans).toBe(3);
    if (hasPublicUrl) expect(config.server.public_url).toBe('https://netwarden.example.lan');
  });

  it('ran without page errors or Content-Security-Policy violations', () => {
    expect(errors).toEqual([]);
  });
});
