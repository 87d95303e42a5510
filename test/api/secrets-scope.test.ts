/**
 * Issue 19 §4, "Secrets and scope", through the real server over HTTP:
 * - a channel URL with credentials is refused; the secrets of a channel (tokens, signing keys,
 *   Slack/Discord webhook URLs, ntfy `?auth=` tokens) never reach the delivery log, the audit log
 *   or the server log, even when the destination echoes them back in a failing answer;
 * - turning TLS off (email `secure`/`require_tls`, UniFi `verify_tls`) clears a stored password;
 * - outbound requests (channel test, update check, name sources) are refused for loopback,
 *   link-local and unspecified addresses unless NETWARDEN_OUTBOUND_ALLOW allows them;
 * - an error answer is read up to 64 KiB, never whole (an endless body ends the attempt at once);
 * - a lease-file path must be a readable lease file, one message for every failure;
 * - a destructive retention needs a session.
 */
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadServerConfig } from '../../src/config/environment.js';
import { lookupNames } from '../../src/names/lookup.js';
import { defaultSettings } from '../../src/core/settings.js';
import { OutboundGuard } from '../../src/util/outbound.js';
import { testDatabases } from '../helpers/databases.js';
import { startFakePihole, type FakePihole } from '../helpers/name-source-fakes.js';
import { startReceiver, type Receiver } from '../helpers/receivers.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';

type Logged = Record<string, unknown> & { msg: string };

function logSink(into: Logged[]) {
  return pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) into.push(JSON.parse(line));
        done();
      },
    }),
  );
}

/** A receiver that sends an error status and then an endless body, counting what it managed to send. */
async function endlessReceiver(status: number): Promise<{ url: string; sent: () => number; closed: Promise<void>; close(): Promise<void> }> {
  let sent = 0;
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const server: Server = createServer((req, res) => {
    req.resume();
    res.writeHead(status, { 'Content-Type': 'text/plain' });
    const pump = () => {
      while (!res.destroyed && res.write(chunk)) sent += chunk.length;
      if (!res.destroyed) sent += chunk.length;
    };
    res.on('drain', pump);
    res.on('close', () => markClosed());
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sent: () => sent,
    closed,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe.each(testDatabases())('secrets stay secret ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let cookie: string;
  let echo: Receiver;
  const logged: Logged[] = [];

  beforeAll(async () => {
    // A destination that fails and echoes back what it got: its path and the credentials in its headers.
    echo = await startReceiver((_i, req) => ({
      status: 500,
      body: `got ${req.path} auth=${String(req.headers.authorization ?? '')} key=${String(req.headers['x-gotify-key'] ?? '')} sig=${String(req.headers['x-netwarden-signature'] ?? '')}`,
    }));
    ({ server, key, cookie } = await startServerWithAdmin(database, { logger: logSink(logged) }));
  });
  afterAll(async () => {
    await server?.close();
    await echo?.close();
  });

  const create = (body: unknown) => server.request('/api/notifications/channels', { method: 'POST', key, json: body });
  const update = (id: number, body: unknown) => server.request(`/api/notifications/channels/${id}`, { method: 'PUT', key, json: body });

  it('refuses a channel URL with a user name or password (400 naming the field)', async () => {
    for (const [type, url] of [
      ['webhook', 'https://user:secret-pw@hooks.example.lan/x'],
      ['webhook', 'http://token@hooks.example.lan/x'],
      ['gotify', 'https://a:b@gotify.example.lan'],
      ['discord', 'https://x:y@discord.example/api/webhooks/1/abc'],
    ] as const) {
      const res = await create({ name: 'creds', type, config: type === 'gotify' ? { url, token: 't' } : { url } });
      expect(res.status, url).toBe(400);
      const detail = (await readJson(res)).detail as string;
      expect(detail).toMatch(/^config\.url: must not carry a user name or password/);
      expect(detail).not.toContain('secret-pw');
    }
    // And on a change of an existing channel.
    const ok = await readJson(await create({ name: 'plain', type: 'webhook', config: { url: `${echo.url}/plain` } }));
    const res = await update(ok.id, { config: { url: 'https://u:p@hooks.example.lan/x' } });
    expect(res.status).toBe(400);
    expect((await readJson(res)).detail).toMatch(/^config\.url: must not carry/);
  });

  it('masks Slack and Discord URLs and ntfy ?auth= tokens in GET and audit, and keeps them when the mask comes back', async () => {
    const slackUrl = `${echo.url}/services/T000/B000/slacksecret-DDDD4444`;
    const slack = await readJson(await create({ name: 'slack', type: 'slack', config: { url: slackUrl } }));
    expect(slack.config).toEqual({ url: '********' });
    const discordUrl = `${echo.url}/api/webhooks/1/discordsecret-EEEE5555`;
    const discord = await readJson(await create({ name: 'discord', type: 'discord', config: { url: discordUrl } }));
    expect(discord.config).toEqual({ url: '********' });
    const ntfyUrl = `${echo.url}/alerts?auth=ntfyauth-CCCC3333`;
    const ntfy = await readJson(await create({ name: 'ntfy-auth', type: 'ntfy', config: { url: ntfyUrl } }));
    expect(ntfy.config.url).toBe('********');
    // A topic without a token is no secret.
    const open = await readJson(await create({ name: 'ntfy-open', type: 'ntfy', config: { url: `${echo.url}/open` } }));
    expect(open.config.url).toBe(`${echo.url}/open`);

    // The mask sent back keeps the stored URL; the list and the single read agree.
    const kept = await readJson(await update(slack.id, { name: 'slack ops', config: { url: '********' } }));
    expect(kept.config).toEqual({ url: '********' });
    expect((await server.app.services.store.notifications.getChannel(slack.id))!.config.url).toBe(slackUrl);
    const list = await (await server.request('/api/notifications/channels', { key })).text();
    const one = await (await server.request(`/api/notifications/channels/${discord.id}`, { key })).text();
    // A new URL replaces it (and reads masked again).
    const moved = await readJson(await update(slack.id, { config: { url: `${echo.url}/services/T1/B1/slacksecret-NEW6666` } }));
    expect(moved.config).toEqual({ url: '********' });

    const audit = await (await server.request('/api/audit-logs?limit=200', { key })).text();
    for (const text of [list, one, audit]) {
      for (const secret of ['slacksecret-DDDD4444', 'slacksecret-NEW6666', 'discordsecret-EEEE5555', 'ntfyauth-CCCC3333']) {
        expect(text).not.toContain(secret);
      }
    }
    expect(audit).toContain('channel_created');
  });

  it('a failing delivery that echoes the secrets back leaves none in the delivery log, the audit log or the server log', async () => {
    const secrets = {
      webhook: 'whsec-AAAA1111',
      ntfyToken: 'ntfy-tok-BBBB2222',
      ntfyAuth: 'ntfyauth-CCCC3333',
      slack: 'slacksecret-DDDD4444',
      discord: 'discordsecret-EEEE5555',
      gotify: 'gotify-FFFF6666',
    };
    const channels: Array<[string, Record<string, unknown>]> = [
      ['webhook', { url: `${echo.url}/hook`, secret: secrets.webhook }],
      ['ntfy', { url: `${echo.url}/alerts`, token: secrets.ntfyToken }],
      ['ntfy', { url: `${echo.url}/alerts?auth=${secrets.ntfyAuth}` }],
      ['slack', { url: `${echo.url}/services/T000/B000/${secrets.slack}` }],
      ['discord', { url: `${echo.url}/api/webhooks/1/${secrets.discord}` }],
      ['gotify', { url: echo.url, token: secrets.gotify }],
    ];
    const before = echo.requests.length;
    for (const [i, [type, config]] of channels.entries()) {
      const c = await readJson(await create({ name: `leak ${i} ${type}`, type, config }));
      const res = await server.request(`/api/notifications/channels/${c.id}/test`, { method: 'POST', key });
      const delivery = await readJson(res);
      expect(delivery, type).toMatchObject({ status: 'failed', attempts: 1 });
      expect(delivery.last_error, type).toMatch(/^HTTP 500 Internal Server Error: got /);
    }
    // The receiver really got (and echoed) them: the redaction is what keeps them out.
    const got = echo.requests.slice(before);
    expect(got.map((r) => `${r.path} ${String(r.headers.authorization ?? '')}`).join(' ')).toContain(secrets.ntfyToken);
    expect(got.some((r) => r.path.includes(secrets.slack))).toBe(true);

    const deliveries = await (await server.request('/api/notifications/deliveries?limit=200', { key })).text();
    expect(deliveries).toContain('[redacted]');
    const audit = await (await server.request('/api/audit-logs?limit=500', { key })).text();
    const log = JSON.stringify(logged);
    expect(log).toContain('notification failed');
    for (const [name, secret] of Object.entries(secrets)) {
      expect(deliveries, name).not.toContain(secret);
      expect(audit, name).not.toContain(secret);
      expect(log, name).not.toContain(secret);
    }
  });

  it('turning TLS off clears the stored password unless it is given again in the same request', async () => {
    const mail = await readJson(
      await create({
        name: 'mail tls',
        type: 'email',
        config: { host: 'smtp.a.lan', port: 465, secure: true, require_tls: true, username: 'u', password: 'pw-1', from: 'a@b.lan', to: ['c@d.lan'] },
      }),
    );
    expect(mail.config.password).toBe('********');
    const stored = async () => (await server.app.services.store.notifications.getChannel(mail.id))!.config.password;
    // secure off, password not given again: cleared.
    let shown = await readJson(await update(mail.id, { config: { secure: false } }));
    expect(shown.config).toMatchObject({ secure: false, require_tls: true, password: null });
    expect(await stored()).toBeNull();
    // Given again in the same request: kept.
    await update(mail.id, { config: { secure: true, password: 'pw-2' } });
    shown = await readJson(await update(mail.id, { config: { secure: false, password: 'pw-3' } }));
    expect(shown.config.password).toBe('********');
    expect(await stored()).toBe('pw-3');
    // The mask does not count as giving it.
    shown = await readJson(await update(mail.id, { config: { require_tls: false, password: '********' } }));
    expect(shown.config).toMatchObject({ require_tls: false, password: null });
    // Turning TLS on takes nothing away.
    await update(mail.id, { config: { password: 'pw-4' } });
    shown = await readJson(await update(mail.id, { config: { secure: true, require_tls: true } }));
    expect(shown.config.password).toBe('********');
    expect(await stored()).toBe('pw-4');

    // UniFi: verify_tls off is a new destination for the controller password.
    const put = (json: unknown) => server.request('/api/config', { method: 'PUT', key, json });
    let res = await put({ name_sources: { unifi: { url: 'https://unifi.example.lan', username: 'ro', password: 'unifi-pw-1', verify_tls: true } } });
    expect(res.status, await res.clone().text()).toBe(200);
    expect((await readJson(res)).name_sources.unifi.password).toBe('********');
    res = await put({ name_sources: { unifi: { verify_tls: false } } });
    expect((await readJson(res)).name_sources.unifi).toMatchObject({ verify_tls: false, password: '' });
    expect((await server.app.services.store.settings.get()).name_sources.unifi.password).toBe('');
    res = await put({ name_sources: { unifi: { verify_tls: true, password: 'unifi-pw-2' } } });
    res = await put({ name_sources: { unifi: { verify_tls: false, password: 'unifi-pw-3' } } });
    expect((await readJson(res)).name_sources.unifi.password).toBe('********');
    expect((await server.app.services.store.settings.get()).name_sources.unifi.password).toBe('unifi-pw-3');
    res = await put({ name_sources: { unifi: { verify_tls: true } } });
    expect((await readJson(res)).name_sources.unifi.password).toBe('********');
  });

  it('reports a short plain reason: the start of a text or JSON error message, never an HTML page or control characters', async () => {
    const answers = await startReceiver((i) =>
      i === 0
        ? { status: 502, headers: { 'Content-Type': 'text/html' }, body: '<html><body>internal admin console: db=10.0.0.9 user=root</body></html>' }
        : { status: 400, headers: { 'Content-Type': 'text/plain' }, body: 'bad\r\nX-Forged: header\u0007 line' },
    );
    try {
      const c = await readJson(await create({ name: 'reasons', type: 'webhook', config: { url: `${answers.url}/hook` } }));
      const html = await readJson(await server.request(`/api/notifications/channels/${c.id}/test`, { method: 'POST', key }));
      expect(html.last_error).toBe('HTTP 502 Bad Gateway');
      const plain = await readJson(await server.request(`/api/notifications/channels/${c.id}/test`, { method: 'POST', key }));
      expect(plain.last_error).toBe('HTTP 400 Bad Request: bad X-Forged: header line');
    } finally {
      await answers.close();
    }
  });

  it('reads an error answer up to 64 KiB, never whole: an endless body fails the delivery at once with a short reason', async () => {
    const endless = await endlessReceiver(500);
    try {
      const c = await readJson(await create({ name: 'endless', type: 'webhook', config: { url: `${endless.url}/hook` } }));
      const rssBefore = process.memoryUsage().rss;
      const started = Date.now();
      const delivery = await readJson(await server.request(`/api/notifications/channels/${c.id}/test`, { method: 'POST', key }));
      const took = Date.now() - started;
      await endless.closed;
      expect(delivery).toMatchObject({ status: 'failed', attempts: 1 });
      expect(delivery.last_error).toMatch(/^HTTP 500 Internal Server Error: x{100}/);
      expect(delivery.last_error.length).toBeLessThan(300);
      // Well inside the 10 s attempt: the answer was not read to its (non-existent) end.
      expect(took).toBeLessThan(5000);
      // What the receiver could push before the connection was dropped: socket buffers, not the body.
      expect(endless.sent()).toBeLessThan(16 * 1024 * 1024);
      expect(process.memoryUsage().rss - rssBefore).toBeLessThan(100 * 1024 * 1024);
    } finally {
      await endless.close();
    }
  });

  it('the update check reads a feed answer within bounds: an endless one ends at once with a short reason', async () => {
    for (const status of [200, 502]) {
      const endless = await endlessReceiver(status);
      try {
        const put = await server.request('/api/config', { method: 'PUT', key, json: { updates: { feed_url: `${endless.url}/releases/latest` } } });
        expect(put.status).toBe(200);
        const started = Date.now();
        const result = await readJson(await server.request('/api/updates/check?force=true', { key }));
        await endless.closed;
        expect(result.error, String(status)).toBe(
          status === 200 ? 'Could not reach the release feed: the answer is too large' : 'The release feed answered HTTP 502 Bad Gateway',
        );
        // Not the 4 s time limit: the read stopped at its bound.
        expect(Date.now() - started).toBeLessThan(3000);
        expect(endless.sent()).toBeLessThan(16 * 1024 * 1024);
      } finally {
        await endless.close();
      }
    }
  });

  it('a lease-file path must be a readable lease file; every failure reads the same', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nw-leases-'));
    try {
      const good = join(dir, 'dnsmasq.leases');
      await writeFile(good, '1732612345 b8:27:eb:12:34:56 10.0.0.5 raspberrypi 01:b8:27:eb:12:34:56\n');
      const garbage = join(dir, 'secret.txt');
      await writeFile(garbage, 'root:x:0:0:root:/root:/bin/bash\n'.repeat(1000));
      await mkdir(join(dir, 'a-directory'));
      const put = (path: string, format = 'auto') =>
        server.request('/api/config', { method: 'PUT', key, json: { name_sources: { dhcp_leases: { enabled: true, path, format } } } });
      const details = new Set<string>();
      for (const path of [join(dir, 'missing.leases'), join(dir, 'a-directory'), garbage, '/proc/self/environ', '/dev/zero']) {
        const res = await put(path);
        expect(res.status, path).toBe(400);
        const detail = (await readJson(res)).detail as string;
        expect(detail).toMatch(/^name_sources\.dhcp_leases\.path: not a readable dnsmasq, ISC dhcpd or Kea lease file/);
        // Neither the path's existence nor a size or a count shows.
        expect(detail).not.toMatch(/\d/);
        details.add(detail);
      }
      expect(details.size).toBe(1);
      // A real lease file in another format than the one named is refused the same way.
      expect((await put(good, 'kea')).status).toBe(400);
      const ok = await put(good);
      expect(ok.status, await ok.clone().text()).toBe(200);
      expect((await readJson(ok)).name_sources.dhcp_leases).toEqual({ enabled: true, path: good, format: 'auto' });
      // Nothing stored by the refused attempts.
      expect((await server.app.services.store.settings.get()).name_sources.dhcp_leases.path).toBe(good);
      await server.request('/api/config', { method: 'PUT', key, json: { name_sources: { dhcp_leases: { enabled: false } } } });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('retention below 7 days needs a session: an API key gets 403 and nothing changes', async () => {
    const put = (json: unknown, auth: { key?: string; cookie?: string }) => server.request('/api/config', { method: 'PUT', ...auth, json });
    const refused = await put({ retention: { days: 3 } }, { key });
    expect(refused.status).toBe(403);
    expect((await readJson(refused)).detail).toBe(
      'retention.days below 7 (it deletes recent scans, changes and audit entries) needs a logged-in session; an API key cannot do this',
    );
    expect((await server.app.services.store.settings.get()).retention.days).toBe(365);
    // Not destructive: 7 days or more, or 0 (keep everything), with a key.
    expect((await put({ retention: { days: 7 } }, { key })).status).toBe(200);
    expect((await put({ retention: { days: 0 } }, { key })).status).toBe(200);
    // With a session: allowed.
    const ok = await put({ retention: { days: 3 } }, { cookie });
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect((await readJson(ok)).retention.days).toBe(3);
    // Other changes with a key while retention already is short are fine.
    expect((await put({ updates: { cache_minutes: 30 } }, { key })).status).toBe(200);
    expect((await put({ retention: { days: 365 } }, { key })).status).toBe(200);
  });
});

describe.each(testDatabases())('outbound requests stay where an administrator allowed ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let receiver: Receiver;
  let pihole: FakePihole;
  const logged: Logged[] = [];

  beforeAll(async () => {
    receiver = await startReceiver();
    pihole = await startFakePihole({ password: 'app-password-1' });
    // As a server without NETWARDEN_OUTBOUND_ALLOW: loopback, link-local and unspecified refused.
    ({ server, key } = await startServerWithAdmin(database, {
      outboundAllow: null,
      logger: logSink(logged),
      settings: { scanning: { engine: 'native', host_timeout_seconds: 30, os_detection: false } },
    }));
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
    await pihole?.close();
  });

  let made = 0;
  const testChannel = async (type: string, config: Record<string, unknown>) => {
    const name = `to ${type} ${++made}`;
    const created = await server.request('/api/notifications/channels', { method: 'POST', key, json: { name, type, config } });
    expect(created.status, await created.clone().text()).toBe(201);
    const c = await readJson(created);
    return readJson(await server.request(`/api/notifications/channels/${c.id}/test`, { method: 'POST', key }));
  };

  it('refuses the channel test to loopback, link-local (cloud metadata) and unspecified addresses, with a short reason, sending nothing', async () => {
    const port = new URL(receiver.url).port;
    const cases: Array<[string, RegExp]> = [
      [
        `http://127.0.0.1:${port}/hook`,
        /^refused: 127\.0\.0\.1 is a loopback address, which outbound requests may not reach unless NETWARDEN_OUTBOUND_ALLOW allows it$/,
      ],
      [`http://127.9.9.9:${port}/hook`, /^refused: 127\.9\.9\.9 is a loopback address/],
      // A name is checked where it is resolved, at connect time.
      [`http://localhost:${port}/hook`, /^refused: (127\.0\.0\.1|::1) is a loopback address/],
      [`http://[::1]:${port}/hook`, /^refused: ::1 is a loopback address/],
      [`http://[::ffff:127.0.0.1]:${port}/hook`, /^refused: 127\.0\.0\.1 is a loopback address/],
      [`http://0.0.0.0:${port}/hook`, /^refused: 0\.0\.0\.0 is a unspecified address/],
    ];
    for (const [url, reason] of cases) {
      const delivery = await testChannel('webhook', { url });
      expect(delivery, url).toMatchObject({ status: 'failed', attempts: 1 });
      expect(delivery.last_error, url).toMatch(reason);
    }
    // The other channel kinds go through the same guard.
    expect((await testChannel('email', { host: '127.0.0.1', port: Number(port), from: 'a@b.lan', to: ['c@d.lan'] })).last_error).toMatch(
      /^refused: 127\.0\.0\.1 is a loopback address/,
    );
    expect((await testChannel('mqtt', { url: `mqtt://127.0.0.1:${port}` })).last_error).toMatch(/^refused: 127\.0\.0\.1 is a loopback address/);
    expect((await testChannel('ntfy', { url: `http://127.0.0.1:${port}/topic` })).last_error).toMatch(/^refused: 127\.0\.0\.1/);
    expect(receiver.requests).toHaveLength(0);
  });

  it('classifies link-local (cloud metadata) and unspecified addresses as refused, and nothing else', () => {
    // Checked on the guard itself rather than by a request: a test must never send to such an
    // address, even against code where the guard is missing. The request path is the one above.
    const guard = new OutboundGuard([]);
    const reason = (address: string) => {
      try {
        guard.check(address);
        return null;
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(reason('169.254.169.254')).toBe(
      '169.254.169.254 is a link-local (cloud metadata) address, which outbound requests may not reach unless NETWARDEN_OUTBOUND_ALLOW allows it',
    );
    expect(reason('169.254.0.1')).toMatch(/^169\.254\.0\.1 is a link-local/);
    expect(reason('fe80::1')).toMatch(/^fe80::1 is a link-local address/);
    expect(reason('::ffff:a9fe:a9fe')).toMatch(/^169\.254\.169\.254 is a link-local/);
    expect(reason('::')).toMatch(/^:: is a unspecified address/);
    expect(reason('0.1.2.3')).toMatch(/^0\.1\.2\.3 is a unspecified address/);
    for (const allowed of ['192.168.1.2', '10.0.0.25', '172.16.5.5', '8.8.8.8', 'fd00::1', '2001:db8::1', '169.255.0.1', '128.0.0.1']) {
      expect(reason(allowed), allowed).toBeNull();
    }
    // The allowance lets exactly what it lists through.
    const allowing = new OutboundGuard(['127.0.0.0/8', '::1/128']);
    expect(() => allowing.check('127.0.0.1')).not.toThrow();
    expect(() => allowing.check('::1')).not.toThrow();
    expect(() => allowing.check('169.254.169.254')).toThrow(/link-local/);
  });

  it('refuses the update check to a loopback feed, saying why in one line', async () => {
    const feed = await startReceiver(() => ({ body: JSON.stringify({ tag_name: 'v9.9.9' }) }));
    try {
      const put = await server.request('/api/config', { method: 'PUT', key, json: { updates: { feed_url: `${feed.url}/releases/latest` } } });
      expect(put.status).toBe(200);
      const result = await readJson(await server.request('/api/updates/check?force=true', { key }));
      expect(result).toMatchObject({ latest_version: null, update_available: false });
      expect(result.error).toMatch(
        /^Could not reach the release feed: 127\.0\.0\.1 is a loopback address, which outbound requests may not reach unless NETWARDEN_OUTBOUND_ALLOW allows it$/,
      );
      expect(feed.requests).toHaveLength(0);
    } finally {
      await feed.close();
    }
  });

  it('refuses a name source on loopback: the scan completes with a warning, and the source is never contacted', async () => {
    const put = await server.request('/api/config', {
      method: 'PUT',
      key,
      json: { name_sources: { pihole: { enabled: true, url: pihole.url, password: 'app-password-1' } } },
    });
    expect(put.status).toBe(200);
    const scan = await triggerScan(server, key, { subnet: '127.0.0.1/32', profile: 'quick' });
    expect((await waitForScan(server, key, scan.scan_id)).status).toBe('completed');
    const warnings = logged.filter((l) => l.msg.startsWith('name source'));
    expect(warnings.map((w) => w.msg)).toEqual([
      `name source Pi-hole (${pihole.url}): refused: 127.0.0.1 is a loopback address, which outbound requests may not reach unless NETWARDEN_OUTBOUND_ALLOW allows it`,
    ]);
    expect(pihole.requests).toHaveLength(0);
  });
});

describe.each(testDatabases())('the allowance lets loopback through ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    ({ server, key } = await startServerWithAdmin(database, { outboundAllow: ['127.0.0.0/8'] }));
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  it('delivers to 127.0.0.1 when NETWARDEN_OUTBOUND_ALLOW lists it, while what it does not list stays refused', async () => {
    const create = async (url: string) =>
      readJson(await server.request('/api/notifications/channels', { method: 'POST', key, json: { name: url, type: 'webhook', config: { url } } }));
    const ok = await create(`${receiver.url}/hook`);
    expect(await readJson(await server.request(`/api/notifications/channels/${ok.id}/test`, { method: 'POST', key }))).toMatchObject({
      status: 'sent',
    });
    expect(receiver.requests).toHaveLength(1);
    // Only what it lists: ::1 is not in 127.0.0.0/8 and stays refused.
    const port = new URL(receiver.url).port;
    const v6 = await create(`http://[::1]:${port}/hook`);
    const refused = await readJson(await server.request(`/api/notifications/channels/${v6.id}/test`, { method: 'POST', key }));
    expect(refused.last_error).toMatch(/^refused: ::1 is a loopback address/);
    expect(receiver.requests).toHaveLength(1);
  });
});

describe('NETWARDEN_OUTBOUND_ALLOW', () => {
  it('is read at start-up; a malformed value stops the start naming the variable', () => {
    expect(loadServerConfig({ NETWARDEN_OUTBOUND_ALLOW: '127.0.0.0/8, ::1/128' }).outboundAllow).toEqual(['127.0.0.0/8', '::1/128']);
    expect(loadServerConfig({}).outboundAllow).toBeNull();
    expect(() => loadServerConfig({ NETWARDEN_OUTBOUND_ALLOW: '127.0.0.0/33' })).toThrow(/^NETWARDEN_OUTBOUND_ALLOW: '127\.0\.0\.0\/33' is not/);
    expect(() => loadServerConfig({ NETWARDEN_OUTBOUND_ALLOW: 'localhost' })).toThrow(/NETWARDEN_OUTBOUND_ALLOW/);
  });
});

describe('name sources and the update feed read an error answer only up to 64 KiB', () => {
  it('a name source answering an endless error body is a quick warning', async () => {
    const endless = await endlessReceiver(503);
    try {
      const sources = structuredClone(defaultSettings().name_sources);
      sources.adguard = { ...sources.adguard, enabled: true, url: endless.url, username: 'u', password: 'p' };
      const started = Date.now();
      // The receiver is on loopback, which the test run's NETWARDEN_OUTBOUND_ALLOW lets through.
      const { warnings } = await lookupNames(sources, { guard: OutboundGuard.fromEnvironment(process.env) });
      await endless.closed;
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/HTTP 503$/);
      expect(Date.now() - started).toBeLessThan(4000);
      expect(endless.sent()).toBeLessThan(8 * 1024 * 1024);
    } finally {
      await endless.close();
    }
  });
});
