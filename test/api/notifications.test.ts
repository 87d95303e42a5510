import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { closedPort } from '../helpers/listeners.js';
import { FAST_RETRIES, startReceiver, type Receiver } from '../helpers/receivers.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';

const CHANNEL_KEYS = ['id', 'name', 'type', 'enabled', 'config', 'filters', 'digest', 'quiet_hours', 'created_at', 'updated_at'].sort();
const DELIVERY_KEYS = ['id', 'channel_id', 'event', 'status', 'attempts', 'last_error', 'created_at', 'sent_at', 'scan_id', 'next_attempt_at'].sort();

describe.each(testDatabases())('notification channels API ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    ({ server, key } = await startServerWithAdmin(database, {
      notifier: { policy: FAST_RETRIES },
      settings: { server: { public_url: 'https://netwarden.example.lan/' } },
    }));
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });
  afterEach(async () => {
    for (const c of await readJson(await server.request('/api/notifications/channels', { key }))) {
      await server.request(`/api/notifications/channels/${c.id}`, { method: 'DELETE', key });
    }
    receiver.requests.length = 0;
    receiver.answer = () => ({});
  });

  const create = (body: unknown) => server.request('/api/notifications/channels', { method: 'POST', key, json: body });
  const update = (id: number, body: unknown) => server.request(`/api/notifications/channels/${id}`, { method: 'PUT', key, json: body });
  const get = async (id: number) => readJson(await server.request(`/api/notifications/channels/${id}`, { key }));
  async function created(body: unknown): Promise<any> {
    const res = await create(body);
    expect(res.status, await res.clone().text()).toBe(201);
    return readJson(res);
  }

  it('creates, lists, reads, changes and deletes a channel, with defaults filled in, and audits each', async () => {
    const channel = await created({ name: 'Ops hook', type: 'webhook', config: { url: `${receiver.url}/hook`, secret: 's3cret' } });
    expect(Object.keys(channel).sort()).toEqual(CHANNEL_KEYS);
    expect(channel).toMatchObject({
      name: 'Ops hook',
      type: 'webhook',
      enabled: true,
      config: { url: `${receiver.url}/hook`, secret: '********' },
      filters: { change_types: null, min_severity: 'low', zones: null, untrusted_only: false, scan_events: ['failed'] },
      digest: null,
      quiet_hours: null,
    });
    expect(await readJson(await server.request('/api/notifications/channels', { key }))).toEqual([channel]);
    expect(await get(channel.id)).toEqual(channel);

    const changed = await readJson(
      await update(channel.id, {
        enabled: false,
        filters: { min_severity: 'high' },
        quiet_hours: { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' },
      }),
    );
    expect(changed).toMatchObject({
      enabled: false,
      // Partial filters merge into the stored ones.
      filters: { change_types: null, min_severity: 'high', scan_events: ['failed'] },
      quiet_hours: { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' },
      config: { secret: '********' },
    });
    const again = await readJson(await update(channel.id, { quiet_hours: { end: '06:30' }, digest: '0 8 * * mon-fri' }));
    expect(again).toMatchObject({ quiet_hours: { start: '22:00', end: '06:30', timezone: 'Europe/Berlin' }, digest: '0 8 * * mon-fri' });
    expect(await readJson(await update(channel.id, { quiet_hours: null, digest: null }))).toMatchObject({ quiet_hours: null, digest: null });

    const del = await server.request(`/api/notifications/channels/${channel.id}`, { method: 'DELETE', key });
    expect(del.status).toBe(200);
    expect(await readJson(del)).toEqual({ status: 'deleted', id: channel.id });
    expect((await server.request(`/api/notifications/channels/${channel.id}`, { key })).status).toBe(404);
    expect((await server.request(`/api/notifications/channels/${channel.id}`, { method: 'DELETE', key })).status).toBe(404);

    const audit = await readJson(await server.request('/api/audit-logs?limit=20', { key }));
    const actions = audit.filter((a: any) => a.resource_type === 'notification_channel').map((a: any) => a.action);
    expect(actions).toEqual(['channel_deleted', 'channel_updated', 'channel_updated', 'channel_updated', 'channel_created']);
    const createdEntry = audit.find((a: any) => a.action === 'channel_created');
    expect(createdEntry).toMatchObject({
      actor: 'test-key',
      resource_id: String(channel.id),
      details: { name: 'Ops hook', config: { secret: '********' } },
    });
    expect(JSON.stringify(audit)).not.toContain('s3cret');
  });

  it('accepts every channel type with its own config and defaults', async () => {
    const configs: Record<string, unknown> = {
      webhook: { url: 'https://hooks.example.lan/x' },
      ntfy: { url: 'https://ntfy.example.lan/netwarden', token: 'tk_abc', priority: 4 },
      gotify: { url: 'https://gotify.example.lan', token: 'AbC' },
      discord: { url: 'https://discord.com/api/webhooks/1/abc' },
      slack: { url: 'https://hooks.slack.com/services/T/B/x' },
      email: { host: 'smtp.example.lan', from: 'netwarden@example.lan', to: ['ops@example.lan'], username: 'nw', password: 'pw' },
      mqtt: { url: 'mqtt://broker.example.lan:1883', username: 'nw', password: 'pw' },
    };
    for (const [type, config] of Object.entries(configs)) {
      const c = await created({ name: `ch-${type}`, type, config });
      expect(c.type).toBe(type);
    }
    const list = await readJson(await server.request('/api/notifications/channels', { key }));
    const byType = Object.fromEntries(list.map((c: any) => [c.type, c.config]));
    expect(byType.email).toEqual({
      host: 'smtp.example.lan',
      port: 587,
      secure: false,
      require_tls: false,
      username: 'nw',
      password: '********',
      from: 'netwarden@example.lan',
      to: ['ops@example.lan'],
      tls_ca: null,
      tls_reject_unauthorized: true,
    });
    expect(byType.mqtt).toEqual({
      url: 'mqtt://broker.example.lan:1883',
      username: 'nw',
      password: '********',
      topic_prefix: 'netwarden',
      ha_discovery: true,
      discovery_prefix: 'homeassistant',
      tls_ca: null,
      tls_reject_unauthorized: true,
    });
    expect(byType.ntfy).toEqual({ url: 'https://ntfy.example.lan/netwarden', token: '********', priority: 4 });
    expect(byType.gotify).toEqual({ url: 'https://gotify.example.lan', token: '********' });
    expect(byType.webhook).toEqual({ url: 'https://hooks.example.lan/x', secret: null });
  });

  it('answers 400 naming the field for every kind of bad input', async () => {
    const existing = await created({ name: 'taken', type: 'webhook', config: { url: 'http://127.0.0.1:9/x' } });
    const hook = { type: 'webhook', config: { url: 'http://127.0.0.1:9/x' } };
    const cases: Array<[unknown, string]> = [
      [{ name: 'a', type: 'pager', config: {} }, 'type: must be one of webhook, ntfy, gotify, discord, slack, email, mqtt'],
      [{ name: 'a', type: 'webhook', config: { url: 'ftp://example.lan/x' } }, 'config.url: must be an http:// or https:// URL'],
      [{ name: 'a', type: 'webhook', config: { url: 'not a url' } }, 'config.url:'],
      [{ name: 'a', type: 'webhook', config: {} }, 'config.url: is required'],
      [{ name: 'a', type: 'webhook', config: { url: 'http://x.lan', extra: 1 } }, 'config.extra: unknown field'],
      [{ name: 'a', type: 'webhook', config: { url: 'http://x.lan', secret: '********' } }, 'config.secret:'],
      [{ name: 'a', type: 'email', config: { host: 'smtp', port: 70000, from: 'a@b.c', to: ['d@e.f'] } }, 'config.port:'],
      [{ name: 'a', type: 'email', config: { host: 'smtp', port: 0, from: 'a@b.c', to: ['d@e.f'] } }, 'config.port:'],
      [{ name: 'a', type: 'mqtt', config: { url: 'mqtt://broker', topic_prefix: 'net/#' } }, 'config.topic_prefix:'],
      [{ name: 'a', type: 'mqtt', config: { url: 'mqtt://broker', topic_prefix: 'net/+/x' } }, 'config.topic_prefix:'],
      [{ name: 'a', type: 'mqtt', config: { url: 'http://broker' } }, 'config.url:'],
      [{ name: 'a', type: 'ntfy', config: { url: 'https://ntfy.sh/t', priority: 7 } }, 'config.priority: must be a whole number from 1 to 5 or null'],
      [{ name: 'a', type: 'email', config: { host: 'smtp', from: 'a@b.c', to: [] } }, 'config.to:'],
      [{ name: 'a', ...hook, digest: '0 8 * *' }, 'digest:'],
      [{ name: 'a', ...hook, digest: '0 0 8 * * *' }, 'digest:'],
      [{ name: 'a', ...hook, digest: '61 * * * *' }, 'digest:'],
      [{ name: 'a', ...hook, quiet_hours: { start: '25:00', end: '07:00' } }, 'quiet_hours.start:'],
      [{ name: 'a', ...hook, quiet_hours: { start: '22:00', end: '7am' } }, 'quiet_hours.end:'],
      [{ name: 'a', ...hook, quiet_hours: { start: '22:00' } }, 'quiet_hours.end: is required'],
      [{ name: 'a', ...hook, quiet_hours: { start: '22:00', end: '07:00', timezone: 'Mars/Olympus' } }, 'quiet_hours.timezone:'],
      [{ name: 'a', ...hook, quiet_hours: { start: '22:00', end: '07:00', timezone: '' } }, 'quiet_hours.timezone:'],
      [{ name: 'a', ...hook, filters: { change_types: ['port_exploded'] } }, 'filters.change_types.0: must be one of'],
      [{ name: 'a', ...hook, filters: { min_severity: 'extreme' } }, 'filters.min_severity: must be one of critical, high, medium, low, info'],
      [{ name: 'a', ...hook, filters: { scan_events: ['started'] } }, 'filters.scan_events.0: must be one of completed, failed'],
      [{ name: 'a', ...hook, filters: { zones: ['Moon'] } }, 'filters.zones.0: unknown zone "Moon"'],
      [{ name: 'a', ...hook, filters: { untrusted_only: 'yes' } }, 'filters.untrusted_only:'],
      [{ name: 'a', ...hook, filters: { colour: 'red' } }, 'filters.colour: unknown field'],
      [{ name: '   ', ...hook }, 'name: must not be blank'],
      [{ name: 'taken', ...hook }, 'name: a channel named "taken" already exists'],
      [{ name: 'a', ...hook, enabled: 'true' }, 'enabled: must be a boolean'],
      [{ ...hook }, 'name: is required'],
      [{ name: 'a', type: 'webhook' }, 'config: is required'],
      [{ name: 'a', ...hook, colour: 'red' }, 'colour: unknown field'],
    ];
    for (const [body, detail] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await readJson(res)).detail, JSON.stringify(body)).toContain(detail);
    }
    for (const [body, detail] of [
      [{ type: 'ntfy' }, "type: a channel's type cannot change"],
      [{ config: { url: 'gopher://x' } }, 'config.url:'],
      [{ digest: 'every day' }, 'digest:'],
      [{ quiet_hours: { start: '22:00' } }, 'quiet_hours.end: is required'],
      [{}, 'body: must contain at least one field'],
    ] as Array<[unknown, string]>) {
      const res = await update(existing.id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await readJson(res)).detail, JSON.stringify(body)).toContain(detail);
    }
    expect((await update(999_999, { enabled: false })).status).toBe(404);
    expect((await server.request('/api/notifications/channels/abc', { key })).status).toBe(400);
    for (const query of ['status=lost', 'limit=0', 'limit=1001', 'offset=-1', 'channel_id=x']) {
      expect((await server.request(`/api/notifications/deliveries?${query}`, { key })).status, query).toBe(400);
    }
    expect((await server.request('/api/notifications/deliveries?channel_id=999999', { key })).status).toBe(404);
    expect((await server.request('/api/notifications/channels')).status).toBe(401);
    // server.public_url, which messages link devices with.
    for (const url of ['ftp://netwarden.lan', 'netwarden.lan', 'javascript:alert(1)']) {
      const res = await server.request('/api/config', { method: 'PUT', key, json: { server: { public_url: url } } });
      expect(res.status, url).toBe(400);
      expect((await readJson(res)).detail).toContain('server.public_url: must be an http:// or https:// URL');
    }
    const config = await readJson(await server.request('/api/config', { key }));
    expect(config.server.public_url).toBe('https://netwarden.example.lan/');
  });

  it('keeps a secret when the mask is sent back and clears it when the destination changes without it', async () => {
    const c = await created({ name: 'signed', type: 'webhook', config: { url: `${receiver.url}/a`, secret: 'first-secret' } });
    // The mask sent back, with other changes: the secret stays.
    let shown = await readJson(await update(c.id, { name: 'signed hook', config: { url: `${receiver.url}/a`, secret: '********' } }));
    expect(shown.config.secret).toBe('********');
    expect((await server.app.services.store.notifications.getChannel(c.id))!.config.secret).toBe('first-secret');
    // A new URL and the mask: the mask does not count as giving the secret again.
    shown = await readJson(await update(c.id, { config: { url: `${receiver.url}/b`, secret: '********' } }));
    expect(shown.config).toEqual({ url: `${receiver.url}/b`, secret: null });
    // A new secret with the new URL in one request is kept.
    shown = await readJson(await update(c.id, { config: { secret: 'second-secret' } }));
    expect(shown.config.secret).toBe('********');
    shown = await readJson(await update(c.id, { config: { url: `${receiver.url}/c`, secret: 'third-secret' } }));
    expect(shown.config).toEqual({ url: `${receiver.url}/c`, secret: '********' });
    expect((await server.app.services.store.notifications.getChannel(c.id))!.config.secret).toBe('third-secret');
    const audit = await readJson(await server.request('/api/audit-logs?action=channel_updated&limit=1', { key }));
    expect(audit[0].details.changes).toEqual({
      'config.url': { old: `${receiver.url}/b`, new: `${receiver.url}/c` },
      'config.secret': { old: '********', new: '******** (replaced)' },
    });
    // Only the URL, no secret at all: cleared.
    shown = await readJson(await update(c.id, { config: { url: `${receiver.url}/d` } }));
    expect(shown.config.secret).toBeNull();
    // null clears explicitly.
    await update(c.id, { config: { secret: 'x' } });
    expect((await readJson(await update(c.id, { config: { secret: null } }))).config.secret).toBeNull();

    // A URL with credentials in it is refused: the secret goes in the type's own fields.
    for (const [type, config] of [
      ['webhook', { url: 'https://alice:pw@hooks.example.lan/x' }],
      ['ntfy', { url: 'https://alice@ntfy.example.lan/topic' }],
      ['slack', { url: 'https://:pw@hooks.slack.example/services/x' }],
    ] as const) {
      const refused = await create({ name: 'creds', type, config });
      expect(refused.status, type).toBe(400);
      expect((await readJson(refused)).detail).toMatch(/^config\.url: must not carry a user name or password/);
    }
    // An ntfy URL with an ?auth= token is itself a secret: masked, kept when the mask comes back.
    const creds = await created({ name: 'creds', type: 'ntfy', config: { url: 'https://ntfy.example.lan/topic?auth=tk_in_url', token: 'tok' } });
    expect(creds.config).toEqual({ url: '********', token: '********', priority: null });
    shown = await readJson(await update(creds.id, { config: { url: '********', priority: 5 } }));
    expect(shown.config).toEqual({ url: '********', token: '********', priority: 5 });
    const stored = (await server.app.services.store.notifications.getChannel(creds.id))!.config;
    expect(stored).toMatchObject({ url: 'https://ntfy.example.lan/topic?auth=tk_in_url', token: 'tok' });
    shown = await readJson(await update(creds.id, { config: { url: 'https://ntfy.example.lan/other' } }));
    expect(shown.config).toEqual({ url: 'https://ntfy.example.lan/other', token: null, priority: 5 });
    // The mask for a URL that is no secret stands for nothing.
    const res = await update(creds.id, { config: { url: '********' } });
    expect(res.status).toBe(400);
    expect((await readJson(res)).detail).toContain('config.url:');

    // Email: the host is the destination of the password.
    const mail = await created({
      name: 'mail',
      type: 'email',
      config: { host: 'smtp.a.lan', username: 'u', password: 'p', from: 'a@b.lan', to: ['c@d.lan'] },
    });
    shown = await readJson(await update(mail.id, { config: { secure: true, from: 'alerts@b.lan' } }));
    expect(shown.config).toMatchObject({ host: 'smtp.a.lan', secure: true, from: 'alerts@b.lan', password: '********' });
    // The port is part of the destination too: another service on the same host gets no password.
    shown = await readJson(await update(mail.id, { config: { port: 465, password: 'p' } }));
    expect(shown.config).toMatchObject({ port: 465, password: '********' });
    shown = await readJson(await update(mail.id, { config: { host: 'smtp.b.lan' } }));
    expect(shown.config).toMatchObject({ host: 'smtp.b.lan', password: null, username: 'u', to: ['c@d.lan'] });
  });

  it('sends a signed test message now and returns its delivery record', async () => {
    const c = await created({ name: 'test me', type: 'webhook', enabled: false, config: { url: `${receiver.url}/hook`, secret: 'k3y' } });
    const res = await server.request(`/api/notifications/channels/${c.id}/test`, { method: 'POST', key });
    expect(res.status).toBe(200);
    const delivery = await readJson(res);
    expect(Object.keys(delivery).sort()).toEqual(DELIVERY_KEYS);
    expect(delivery).toMatchObject({
      channel_id: c.id,
      event: 'test',
      status: 'sent',
      attempts: 1,
      last_error: null,
      scan_id: null,
      next_attempt_at: null,
    });
    expect(delivery.sent_at).toEqual(expect.any(String));
    const [req] = receiver.requests;
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/hook');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toBe('Netwarden/0.0.0-test');
    expect(req.headers['x-netwarden-event']).toBe('test');
    expect(req.headers['x-netwarden-delivery']).toBe(String(delivery.id));
    const expected = `sha256=${createHmac('sha256', 'k3y').update(req.body).digest('hex')}`;
    expect(req.headers['x-netwarden-signature']).toBe(expected);
    const body = req.json();
    expect(Object.keys(body).sort()).toEqual(['changes', 'event', 'scan', 'sent_at', 'summary']);
    expect(body).toMatchObject({ event: 'test', scan: null, changes: [] });
    expect(body.summary).toContain('test me');

    // A failing destination: one attempt, no retry, the reason in the record.
    receiver.answer = () => ({ status: 500, body: 'boom' });
    const failed = await readJson(await server.request(`/api/notifications/channels/${c.id}/test`, { method: 'POST', key }));
    expect(failed).toMatchObject({ status: 'failed', attempts: 1, last_error: 'HTTP 500 Internal Server Error: boom', sent_at: null });
    const down = await created({ name: 'down', type: 'webhook', config: { url: `http://127.0.0.1:${await closedPort('127.0.0.1')}/x` } });
    const refused = await readJson(await server.request(`/api/notifications/channels/${down.id}/test`, { method: 'POST', key }));
    expect(refused).toMatchObject({ status: 'failed', attempts: 1 });
    expect(refused.last_error).toContain('connection failed: ECONNREFUSED');
    expect((await server.request('/api/notifications/channels/999999/test', { method: 'POST', key })).status).toBe(404);

    // The delivery log: newest first, filtered, paged, with X-Total-Count.
    const all = await server.request('/api/notifications/deliveries', { key });
    expect(all.headers.get('x-total-count')).toBe('3');
    expect((await readJson(all)).map((d: any) => d.status)).toEqual(['failed', 'failed', 'sent']);
    const mine = await server.request(`/api/notifications/deliveries?channel_id=${c.id}&status=failed`, { key });
    expect(mine.headers.get('x-total-count')).toBe('1');
    expect((await readJson(mine))[0].id).toBe(failed.id);
    const page = await readJson(await server.request('/api/notifications/deliveries?limit=1&offset=1', { key }));
    expect(page.map((d: any) => d.id)).toEqual([failed.id]);
  });

  it("sends the test message in each HTTP type's own format", async () => {
    const types: Array<[string, Record<string, unknown>]> = [
      ['ntfy', { url: `${receiver.url}/base/alerts`, token: 'tk_1' }],
      ['gotify', { url: `${receiver.url}/gotify/`, token: 'app-token' }],
      ['discord', { url: `${receiver.url}/api/webhooks/1/abc` }],
      ['slack', { url: `${receiver.url}/services/T/B/x` }],
    ];
    for (const [type, config] of types) {
      const c = await created({ name: type, type, config });
      const d = await readJson(await server.request(`/api/notifications/channels/${c.id}/test`, { method: 'POST', key }));
      expect(d, type).toMatchObject({ status: 'sent', attempts: 1 });
    }
    const [ntfy, gotify, discord, slack] = receiver.requests;
    expect(ntfy.path).toBe('/base/');
    expect(ntfy.headers.authorization).toBe('Bearer tk_1');
    expect(ntfy.json()).toMatchObject({ topic: 'alerts', title: 'Netwarden: test message', priority: 2 });
    expect(gotify.path).toBe('/gotify/message');
    expect(gotify.headers['x-gotify-key']).toBe('app-token');
    expect(gotify.json()).toMatchObject({ title: 'Netwarden: test message', priority: 1 });
    expect(discord.json()).toMatchObject({ username: 'Netwarden', embeds: [], allowed_mentions: { parse: [] } });
    expect(discord.json().content).toContain('test message');
    expect(slack.json().blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'Netwarden: test message' } });
  });

  it('documents the routes in the OpenAPI document', async () => {
    const doc = await readJson(await server.request('/openapi.json'));
    for (const path of [
      '/api/notifications/channels',
      '/api/notifications/channels/{channel_id}',
      '/api/notifications/channels/{channel_id}/test',
      '/api/notifications/deliveries',
    ]) {
      expect(doc.paths[path], path).toBeDefined();
    }
    expect(doc.paths['/api/notifications/channels'].post.responses['201']).toBeDefined();
  });

  it("describes a channel's config as the union of the channel types' schemas, secrets marked", async () => {
    const doc = await readJson(await server.request('/openapi.json'));
    const created = doc.paths['/api/notifications/channels'].post;
    const config = created.requestBody.content['application/json'].schema.properties.config;
    expect(config.anyOf.map((member: { $ref: string }) => member.$ref.replace('#/components/schemas/', ''))).toEqual([
      'WebhookChannelConfig',
      'NtfyChannelConfig',
      'GotifyChannelConfig',
      'DiscordChannelConfig',
      'SlackChannelConfig',
      'EmailChannelConfig',
      'MqttChannelConfig',
    ]);
    expect(config.description).toMatch(/read back as `\*{8}`/);
    const listed = doc.paths['/api/notifications/channels'].get.responses['200'].content['application/json'].schema;
    expect(listed.items.properties.config.anyOf).toEqual(config.anyOf);
    const email = doc.components.schemas.EmailChannelConfig;
    expect(email['x-channel-type']).toBe('email');
    expect(email.required).toEqual(expect.arrayContaining(['host', 'from', 'to']));
    expect(email.properties.port).toMatchObject({ type: 'integer', default: 587, title: 'Port' });
    expect(email.properties.password.anyOf[0]['x-secret']).toBe(true);
    expect(doc.components.schemas.WebhookChannelConfig.properties.secret['x-secret']).toBe(true);
    expect(doc.components.schemas.WebhookChannelConfig.properties.url['x-secret']).toBeUndefined();
  });
});
