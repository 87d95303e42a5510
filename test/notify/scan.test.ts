/**
 * Real scans of loopback listeners, with real receivers: after the second scan opens two ports,
 * each channel gets ONE message carrying exactly the changes its filters select, a channel whose
 * filters select nothing gets none, and a receiver that is down leaves the scan alone while the
 * failure shows in the delivery log and the audit log.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { bannerListener, closedPort, httpListener, type Listener } from '../helpers/listeners.js';
import { FAST_RETRIES, startReceiver, type Receiver } from '../helpers/receivers.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

describe.each(testDatabases())('notifications after a real scan ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let receiver: Receiver;
  const listeners: Listener[] = [];
  let ssh: Listener;
  let portB: number;
  let portC: number;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    receiver = await startReceiver();
    ssh = await bannerListener('127.0.0.21', 'SSH-2.0-OpenSSH_9.6\r\n');
    listeners.push(ssh);
    portB = await closedPort('127.0.0.22');
    portC = await closedPort('127.0.0.23');
    ({ server, key } = await startServerWithAdmin(database, {
      notifier: { policy: FAST_RETRIES },
      settings: {
        scanning: { engine: 'native', port_range: `${ssh.port},${portB},${portC}`, host_timeout_seconds: 30, os_detection: false },
        server: { public_url: 'http://netwarden.example.lan:8080' },
      },
    }));
    const down = `http://127.0.0.1:${await closedPort('127.0.0.1')}/down`;
    const channels: Record<string, unknown> = {
      all: { type: 'webhook', config: { url: `${receiver.url}/all`, secret: 'hook-secret' }, filters: { scan_events: ['completed', 'failed'] } },
      untrusted: { type: 'ntfy', config: { url: `${receiver.url}/ntfy/untrusted` }, filters: { untrusted_only: true } },
      iot: { type: 'gotify', config: { url: `${receiver.url}/gotify`, token: 'g' }, filters: { zones: ['IoT'] } },
      added: { type: 'discord', config: { url: `${receiver.url}/discord` }, filters: { change_types: ['device_added'] } },
      critical: { type: 'slack', config: { url: `${receiver.url}/slack` }, filters: { min_severity: 'critical' } },
      down: { type: 'webhook', config: { url: down } },
    };
    for (const [name, body] of Object.entries(channels)) {
      const res = await server.request('/api/notifications/channels', { method: 'POST', key, json: { name, ...(body as object) } });
      expect(res.status, await res.clone().text()).toBe(201);
      ids[name] = (await readJson(res)).id;
    }
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
    await Promise.all(listeners.map((l) => l.close()));
  });

  const requestsTo = (prefix: string) => receiver.requests.filter((r) => r.path.startsWith(prefix));

  it('sends one message per channel per scan with the changes its filters select', async () => {
    // First scan: the baseline. No changes; only the channel that asked for "completed" hears of it.
    const first = await triggerScan(server, key, { subnet: '127.0.0.16/28', profile: 'normal' });
    expect((await waitForScan(server, key, first.scan_id)).status).toBe('completed');
    await receiver.waitFor(1);
    await server.app.services.notifier.idle();
    await waitFor(
      'no pending deliveries',
      async () => (await readJson(await server.request('/api/notifications/deliveries?status=pending', { key }))).length === 0,
    );
    expect(receiver.requests.map((r) => r.path)).toEqual(['/all']);
    expect(receiver.requests[0].json()).toMatchObject({
      event: 'scan.completed',
      changes: [],
      scan: { scan_id: first.scan_id, status: 'completed' },
    });
    receiver.requests.length = 0;

    // Two services appear; the device on .23 is trusted, the one on .22 is in the IoT zone.
    listeners.push(await httpListener('127.0.0.22', 'nginx/1.24.0', portB), await bannerListener('127.0.0.23', 'SSH-2.0-OpenSSH_9.6\r\n', portC));
    const devices = await readJson(await server.request('/api/devices', { key }));
    const device = (ip: string) => devices.find((d: { ip_address: string }) => d.ip_address === ip);
    await server.request(`/api/devices/${device('127.0.0.22').id}`, { method: 'PUT', key, json: { zone: 'IoT', label: 'Camera' } });
    await server.request(`/api/devices/${device('127.0.0.23').id}`, { method: 'PUT', key, json: { is_trusted: true } });

    const second = await triggerScan(server, key, { subnet: '127.0.0.16/28', profile: 'normal' });
    const scan = await waitForScan(server, key, second.scan_id);
    // The receiver that is down does not fail the scan.
    expect(scan).toMatchObject({ status: 'completed', error: null });
    const changes = await readJson(await server.request(`/api/changes?scan_id=${second.scan_id}`, { key }));
    const opened = changes.filter((c: { change_type: string }) => c.change_type === 'port_opened');
    expect(opened.map((c: { device_ip: string; port: number }) => [c.device_ip, c.port]).sort()).toEqual([
      ['127.0.0.22', portB],
      ['127.0.0.23', portC],
    ]);

    await server.app.services.notifier.idle();
    await waitFor('every delivery settled', async () => {
      const pending = await readJson(await server.request('/api/notifications/deliveries?status=pending', { key }));
      return pending.length === 0;
    });
    const log = await readJson(await server.request(`/api/notifications/deliveries?limit=100`, { key }));
    const ofScan = log.filter((d: { scan_id: number }) => d.scan_id === second.scan_id);
    const byChannel = Object.fromEntries(
      Object.entries(ids).map(([name, id]) => [name, ofScan.filter((d: { channel_id: number }) => d.channel_id === id)]),
    );
    // One delivery per channel that has something to say; none for the channels whose filters select nothing.
    expect(byChannel.all).toHaveLength(1);
    expect(byChannel.untrusted).toHaveLength(1);
    expect(byChannel.iot).toHaveLength(1);
    expect(byChannel.added).toHaveLength(0);
    expect(byChannel.critical).toHaveLength(0);
    expect(requestsTo('/discord')).toHaveLength(0);
    expect(requestsTo('/slack')).toHaveLength(0);

    // The webhook: every change of the scan (all are at least low), signed.
    const [hook] = requestsTo('/all');
    expect(requestsTo('/all')).toHaveLength(1);
    expect(hook.headers['x-netwarden-signature']).toBe(`sha256=${createHmac('sha256', 'hook-secret').update(hook.body).digest('hex')}`);
    const body = hook.json();
    const wanted = changes.filter((c: { severity: string }) => c.severity !== 'info');
    expect(body.event).toBe('scan.changes');
    expect(body.scan).toMatchObject({ scan_id: second.scan_id, status: 'completed' });
    expect(body.changes.map((c: { id: number }) => c.id).sort()).toEqual(wanted.map((c: { id: number }) => c.id).sort());
    expect(body.summary).toContain(`scan #${second.scan_id} of 127.0.0.16/28`);

    // ntfy, untrusted only: the trusted .23 is left out.
    const ntfy = requestsTo('/ntfy/');
    expect(ntfy).toHaveLength(1);
    const note = ntfy[0].json();
    expect(note.topic).toBe('untrusted');
    expect(note.message).toContain(`127.0.0.22 "Camera" — http://netwarden.example.lan:8080/devices/${device('127.0.0.22').id}`);
    expect(note.message).toContain(`Port ${portB}/tcp`);
    expect(note.message).not.toContain('127.0.0.23');
    expect(note.click).toBe(`http://netwarden.example.lan:8080/devices/${device('127.0.0.22').id}`);

    // Gotify, IoT zone only.
    const gotify = requestsTo('/gotify/message');
    expect(gotify).toHaveLength(1);
    expect(gotify[0].json().message).toContain(`Port ${portB}/tcp`);
    expect(gotify[0].json().message).not.toContain(`Port ${portC}/tcp`);

    // The receiver that is down: failed after its retries, in the delivery log and the audit log.
    expect(byChannel.down).toHaveLength(1);
    expect(byChannel.down[0]).toMatchObject({ status: 'failed', attempts: 4, event: 'scan.changes' });
    expect(byChannel.down[0].last_error).toContain('ECONNREFUSED');
    const audit = await readJson(await server.request('/api/audit-logs?action=notification_failed', { key }));
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ resource_id: String(ids.down), details: { channel: 'down', delivery_id: byChannel.down[0].id } });
  });
});
