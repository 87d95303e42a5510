/// <reference lib="dom" />
/**
 * Agents and the scan queue in Chromium against the real server: an agent added on the Agents
 * page (the form's own checks and the server's refusal, the token and the command to run shown
 * once, listed offline, revoked after a warning), the Scans page naming who ran a loopback scan
 * and the agent that queued scans wait for, with their places in line, and the parallel-scans
 * setting. No agent runs here: a scan routed to one waits in `queued` and never sends a packet;
 * the only scan that runs reaches 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { testDatabases } from '../helpers/databases.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { adminWithKey, readJson, startTestServer, type TestServer } from '../helpers/server.js';
import { browserSkipReason, openUi, type UiBrowser } from '../helpers/browser.js';

const skipReason = browserSkipReason();

const LOOPBACK = '127.0.0.1';
/** The networks of the agent made through the API; scans of them wait for it (it never runs). */
const AGENT_NETWORK = '10.66.0.0/24';
/** Targets inside it: queued for the agent, never scanned by anyone in this test. */
const AGENT_TARGETS = ['10.66.0.5/32', '10.66.0.6/32'];

describe.skipIf(skipReason !== null).sequential('web UI: agents and the scan queue', () => {
  let server: TestServer;
  let browser: UiBrowser;
  let page: Page;
  let errors: string[];
  let key: string;
  let cookie: string;
  let labAgentId: number;

  beforeAll(async () => {
    server = await startTestServer(testDatabases()[0], {
      // Agents' networks must lie within the allowed targets: the second lab bridge's too (nothing is scanned there).
      scanAllow: ['127.0.0.0/8', '10.66.0.0/24', '10.66.1.0/24'],
      settings: {
        network: { subnet: `${LOOPBACK}/32` },
        scanning: { os_detection: false, max_hosts: 1, max_parallel_scans: 3 },
      },
    });
    const admin = await adminWithKey(server);
    key = admin.key;
    cookie = admin.cookie;
    const res = await server.request('/api/agents', { method: 'POST', cookie, json: { name: 'lab-agent', networks: [AGENT_NETWORK] } });
    expect(res.status).toBe(201);
    labAgentId = (await readJson(res)).id;
    browser = await openUi(server.baseUrl, cookie);
    page = browser.page;
    errors = browser.errors;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const url = (path: string) => `${server.baseUrl}${path}`;
  const json = async (path: string) => readJson(await server.request(path, { key }));
  const agentNames = async () => (await json('/api/agents')).map((a: { name: string }) => a.name);

  it('adds an agent: checks the form, shows the server’s refusal, then the token and the command once', async () => {
    await page.goto(url('/'));
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agents' }).click();
    const form = page.getByRole('form', { name: 'Add an agent' });
    const table = page.getByRole('table', { name: 'Agents' });
    await expect.poll(() => table.getByRole('row').filter({ hasText: 'lab-agent' }).count()).toBe(1);

    // The form's own check, in the server's words, naming the entry: nothing is sent.
    await form.getByLabel('Name').fill('branch-office');
    await form.getByLabel('Networks').fill('10.66.1.0/24\n10.66.1.300');
    await form.getByRole('button', { name: 'Add agent' }).click();
    await expect
      .poll(() => form.getByRole('alert').textContent())
      .toBe('Networks, entry 2: must be an IPv4 CIDR network such as 192.168.1.0/24, or a single IPv4 address (entry “10.66.1.300”)');
    await form.getByLabel('Name').fill('   ');
    await form.getByRole('button', { name: 'Add agent' }).click();
    await expect.poll(() => form.getByRole('alert').textContent()).toBe('Name: must not be blank');
    expect(await agentNames()).toEqual(['lab-agent']);

    // The server's refusal (a name in use), shown as it answered.
    await form.getByLabel('Name').fill('lab-agent');
    await form.getByLabel('Networks').fill('10.66.1.0/24');
    await form.getByRole('button', { name: 'Add agent' }).click();
    await expect.poll(() => form.getByRole('alert').textContent()).toBe("Name: an agent named 'lab-agent' already exists");
    await browser.screenshot('a01-agent-refused');

    await form.getByLabel('Name').fill('branch-office');
    await form.getByLabel('Networks').fill('10.66.1.7/24, 10.66.1.0/24');
    await form.getByRole('button', { name: 'Add agent' }).click();
    const panel = page.getByRole('region', { name: 'Agent “branch-office” added' });
    const token = (await panel.getByTestId('new-agent-token').textContent())!;
    expect(token).toMatch(/^nwa_/);
    // No server.public_url: the command names the address this page was loaded from.
    expect(await panel.getByTestId('new-agent-command').textContent()).toBe(`netwarden agent --server ${server.baseUrl} --token ${token}`);
    expect(await panel.getByTestId('new-agent-env-command').textContent()).toBe(
      `NETWARDEN_AGENT_TOKEN=${token} netwarden agent --server ${server.baseUrl}`,
    );
    expect(await panel.textContent()).toContain('10.66.1.0/24');
    await panel.getByRole('button', { name: 'Copy command', exact: true }).click();
    await expect.poll(() => panel.getByRole('status').first().textContent()).toMatch(/Copied to the clipboard|did not allow copying/);
    // The form is empty again, ready for the next one.
    expect(await form.getByLabel('Name').inputValue()).toBe('');
    await browser.screenshot('a02-agent-token');

    // Listed, offline (it never ran), never heard from; the networks as the server stored them.
    const row = table.getByRole('row').filter({ hasText: 'branch-office' });
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.locator('.badge').textContent()).toBe('Offline');
    expect(await row.textContent()).toContain('never');
    expect(await row.getByRole('listitem').allTextContents()).toEqual(['10.66.1.0/24']);
    const stored = (await json('/api/agents')).find((a: { name: string }) => a.name === 'branch-office');
    expect(stored).toMatchObject({ status: 'offline', networks: ['10.66.1.0/24'], last_seen_at: null });
    expect(token.startsWith(stored.token_prefix)).toBe(true);

    await panel.getByRole('button', { name: 'Done' }).click();
    expect(await panel.count()).toBe(0);
    // Shown once: neither Done nor a reload brings it back.
    await page.reload();
    await expect.poll(() => table.getByRole('row').filter({ hasText: 'branch-office' }).count()).toBe(1);
    expect(await page.content()).not.toContain(token);
  });

  it('revokes an agent after saying that its queued and running scans will fail', async () => {
    await page.goto(url('/agents'));
    await page.getByRole('button', { name: 'Revoke branch-office' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke agent' });
    expect(await dialog.textContent()).toContain('Its queued and running scans will fail.');
    await browser.screenshot('a03-agent-revoke');
    await dialog.getByRole('button', { name: 'Revoke agent' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toBe('Agent “branch-office” revoked.');
    expect(await agentNames()).toEqual(['lab-agent']);
    // The list is fetched again after the revoke: the row goes once that answer is in.
    await expect.poll(() => page.getByRole('table', { name: 'Agents' }).getByRole('row').filter({ hasText: 'branch-office' }).count()).toBe(0);
  });

  it('shows who ran a loopback scan, and queued scans waiting for their agent in order', async () => {
    const done = await triggerScan(server, key, { profile: 'quick', subnet: `${LOOPBACK}/32` });
    const finished = await waitForScan(server, key, done.scan_id);
    expect(finished.status).toBe('completed');
    expect(finished.runner).toMatch(/^server /);

    const queuedIds: number[] = [];
    try {
      for (const target of AGENT_TARGETS) {
        const started = await triggerScan(server, key, { profile: 'quick', subnet: target });
        queuedIds.push(started.scan_id);
        expect(await json(`/api/scans/${started.scan_id}`)).toMatchObject({ status: 'queued', agent_id: labAgentId, runner: null });
      }

      await page.goto(url('/scans'));
      const history = page.getByRole('table', { name: 'Scan history' });
      const doneRow = history.getByRole('row').filter({ hasText: new RegExp(`^${done.scan_id}`) });
      // The serving process is "this server"; its process name is in the tooltip.
      await expect.poll(() => doneRow.locator('.runner').textContent()).toBe('this server');
      expect(await doneRow.locator('.runner').getAttribute('title')).toBe(finished.runner);
      for (const id of queuedIds) {
        const row = history.getByRole('row').filter({ hasText: new RegExp(`^${id}`) });
        await expect.poll(() => row.textContent()).toContain('waiting for agent lab-agent (offline)');
      }

      const queue = page.getByRole('table', { name: 'Scan queue' });
      const rows = queue.getByRole('row');
      await expect.poll(() => rows.count()).toBe(3);
      const texts = await rows.allTextContents();
      expect(texts[1]).toMatch(new RegExp(`^1st${queuedIds[0]}10\\.66\\.0\\.5/32waiting for agent lab-agent`));
      expect(texts[2]).toMatch(new RegExp(`^2nd${queuedIds[1]}10\\.66\\.0\\.6/32waiting for agent lab-agent`));
      // What keeps each waiting, in words: the second waits for the first, not for "a worker".
      expect(texts[1]).not.toContain('waits for scan');
      expect(texts[2]).toContain(`waits for scan #${queuedIds[0]}`);
      // The scan next in line waits for its agent: it does not show as running, and a scan can still be started.
      await expect.poll(() => page.getByRole('region', { name: 'Running scan' }).count()).toBe(0);
      expect(await page.getByRole('form', { name: 'Start a scan' }).count()).toBe(1);
      await browser.screenshot('a04-scans-queue');

      // Withdrawn from the queue.
      await queue.getByRole('button', { name: `Cancel queued scan #${queuedIds[1]}` }).click();
      await expect.poll(async () => (await json(`/api/scans/${queuedIds[1]}`)).status).toBe('cancelled');
      await expect.poll(() => rows.count()).toBe(2);
    } finally {
      for (const id of queuedIds) {
        const scan = await json(`/api/scans/${id}`);
        if (scan.status === 'queued') await server.request(`/api/scans/${id}/cancel`, { method: 'POST', key });
      }
    }
    for (const id of queuedIds) expect((await json(`/api/scans/${id}`)).status).toBe('cancelled');
    await page.reload();
    await expect.poll(() => page.getByRole('region', { name: 'Queue' }).textContent()).toContain('No scan is waiting.');
  });

  it('saves how many scans may run at once', async () => {
    await page.goto(url('/settings/network'));
    const network = page.getByRole('region', { name: 'Network and scanning' });
    const field = network.getByLabel('Parallel scans');
    expect(await field.inputValue()).toBe('3');
    await field.fill('2');
    await network.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => network.getByRole('status').textContent()).toBe('Settings saved.');
    expect((await json('/api/config')).scanning.max_parallel_scans).toBe(2);
  });

  it('ran without page errors or Content-Security-Policy violations', () => {
    expect(errors).toEqual([]);
  });
});
