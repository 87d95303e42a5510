/**
 * The MQTT channel through the whole product, as a Home Assistant user sees it: the real server,
 * an `mqtt` channel created through the API and pointed at a real broker (the local Mosquitto when
 * it runs, else aedes), a second client standing in for Home Assistant, and real scans of loopback
 * listeners triggered through the API. A baseline scan, then a second one that finds a new port
 * and a new device (every loopback address answers, so the baseline leaves the new device's
 * address out through network.exclude, and the administrator stops excluding it before the
 * second scan):
 * - discovery documents for the network's entities, with what HA needs to create them;
 * - the scan-running binary sensor goes ON when a scan starts and OFF when it ends;
 * - devices online / at risk read what GET /api/stats and /api/devices say after the scan;
 * - the scan's changes arrive as ONE message on `<topic_prefix>/events` (not one per change), the
 *   new device as one HA event, and the delivery reads `sent` in the delivery log.
 * Every test uses its own topic and discovery prefixes and clears the retained messages it left
 * (several runs may share the Mosquitto).
 */
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MqttConfig, mqttDriver } from '../../src/notify/channels/mqtt.js';
import { DRIVERS } from '../../src/notify/channels/index.js';
import type { ChannelDriver } from '../../src/notify/types.js';
import { testDatabases } from '../helpers/databases.js';
import { bannerListener, closedPort, type Listener } from '../helpers/listeners.js';
import {
  HA_ENTITIES,
  type ReceivedMessage,
  type Subscriber,
  subscriber,
  type TestBroker,
  testBroker,
  uniqueTopicPrefix,
} from '../helpers/mqtt-broker.js';
import { FAST_RETRIES } from '../helpers/receivers.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/** A subnet per store, away from the addresses other test files scan (they may run at the same time). */
const SUBNETS = { sqlite: '127.0.9.16/28', postgres: '127.0.9.32/28' } as const;

interface State {
  subnet: string;
  devices_online: number;
  devices_at_risk: number;
  scan_running: boolean;
  last_scan_at: string | null;
  last_scan: { scan_id: number; status: string } | null;
}

/**
 * What Home Assistant shows for an entity: its value template applied to the state payload. Only
 * the template forms Netwarden publishes are understood; anything else fails the test, so a
 * template change has to be looked at here too.
 */
function render(template: string, state: State): string {
  const field = template.match(/^\{\{ value_json\.(\w+) \}\}$/);
  if (field) {
    const value = (state as unknown as Record<string, unknown>)[field[1]];
    if (value === null || value === undefined) return 'None';
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
    throw new Error(`${field[1]} is not a scalar`);
  }
  if (template === "{{ 'ON' if value_json.scan_running else 'OFF' }}") return state.scan_running ? 'ON' : 'OFF';
  throw new Error(`template not understood by this test: ${template}`);
}

const json = (m: ReceivedMessage) => JSON.parse(m.payload) as Record<string, any>;

describe.each(testDatabases())('MQTT channel end to end ($kind)', (database) => {
  const subnet = SUBNETS[database.kind];
  const base = subnet.slice(0, subnet.lastIndexOf('.') + 1); // "127.0.9."
  const first = Number(subnet.split('/')[0].split('.')[3]);
  const host = (n: number) => `${base}${first + n}`;
  const id = subnet.replace(/[./]/g, '_');
  const topicPrefix = uniqueTopicPrefix('nwe2e');
  const discoveryPrefix = uniqueTopicPrefix('hae2e');
  const stateTopic = `${topicPrefix}/${id}/state`;
  const configTopic = (component: string, key: string) => `${discoveryPrefix}/${component}/netwarden_${id}_${key}/config`;

  let broker: TestBroker;
  let ha: Subscriber;
  let server: TestServer;
  let key: string;
  let channelId: number;
  const listeners: Listener[] = [];
  let sshPort: number;
  let ftpPort: number;
  let newPort: number;

  beforeAll(async () => {
    broker = await testBroker();
    // Home Assistant is subscribed before Netwarden says anything.
    ha = await subscriber(broker.url, [`${topicPrefix}/#`, `${discoveryPrefix}/#`]);
    // .1 runs SSH; .2 an FTP server (a medium risk: the device is "at risk"); the second scan
    // finds a new port on .1 and a new device on .3 (excluded from the baseline).
    const ssh = await bannerListener(host(1), 'SSH-2.0-OpenSSH_9.6\r\n');
    const ftp = await bannerListener(host(2), '220 (vsFTPd 3.0.5)\r\n');
    listeners.push(ssh, ftp);
    sshPort = ssh.port;
    ftpPort = ftp.port;
    newPort = await closedPort(host(1));
    ({ server, key } = await startServerWithAdmin(database, {
      notifier: { policy: FAST_RETRIES },
      settings: {
        network: { exclude: [`${host(3)}/32`] },
        scanning: { engine: 'native', port_range: `${sshPort},${ftpPort},${newPort}`, host_timeout_seconds: 30, os_detection: false },
      },
    }));
  });

  afterAll(async () => {
    // The server first: its notifier closes the MQTT connection (status goes offline).
    await server?.close();
    await ha?.close();
    await Promise.all(listeners.map((l) => l.close()));
    if (broker) {
      // Retained messages outlive the test on a shared Mosquitto: clear every one this test left.
      const topics = [`${topicPrefix}/status`, stateTopic, ...HA_ENTITIES.map(([c, k]) => configTopic(c, k))];
      const client = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0, connectTimeout: 5000 }).catch(() => null);
      if (client) {
        await Promise.all(topics.map((t) => client.publishAsync(t, '', { qos: 1, retain: true })));
        await client.endAsync();
      }
      await broker.close();
    }
  });

  /** Every state message about `scanId`, in the order the broker delivered them. */
  const statesOf = (scanId: number) => ha.messages.filter((m) => m.topic === stateTopic && json(m).last_scan?.scan_id === scanId);

  /** Waits until nothing is queued or being sent, and returns the channel's deliveries. */
  async function settledDeliveries(): Promise<any[]> {
    await server.app.services.notifier.idle();
    await waitFor(
      'no pending deliveries',
      async () => (await readJson(await server.request('/api/notifications/deliveries?status=pending', { key }))).length === 0,
    );
    const all = await readJson(await server.request('/api/notifications/deliveries?limit=100', { key }));
    return all.filter((d: { channel_id: number }) => d.channel_id === channelId);
  }

  /** Runs a scan through the API and waits for the state saying it ended (scan running OFF). */
  async function scan(): Promise<{ scanId: number; on: ReceivedMessage; off: ReceivedMessage }> {
    const { scan_id: scanId } = await triggerScan(server, key, { subnet, profile: 'normal' });
    expect((await waitForScan(server, key, scanId)).status).toBe('completed');
    const off = await ha.next(stateTopic, (m) => json(m).last_scan?.scan_id === scanId && json(m).scan_running === false);
    const on = await ha.next(stateTopic, (m) => json(m).last_scan?.scan_id === scanId && json(m).scan_running === true);
    return { scanId, on, off };
  }

  it('creates the channel through the API', async () => {
    const res = await server.request('/api/notifications/channels', {
      method: 'POST',
      key,
      json: {
        name: 'Home Assistant',
        type: 'mqtt',
        config: { url: broker.url, topic_prefix: topicPrefix, discovery_prefix: discoveryPrefix },
        // Every change, so the message can be compared with GET /api/changes as it is.
        filters: { min_severity: 'info' },
      },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const channel = await readJson(res);
    expect(channel).toMatchObject({
      type: 'mqtt',
      enabled: true,
      config: { url: broker.url, topic_prefix: topicPrefix, discovery_prefix: discoveryPrefix, ha_discovery: true },
    });
    channelId = channel.id;
  });

  it('baseline scan: the network appears in Home Assistant, scan running goes ON then OFF, and no message is sent', async () => {
    const { scanId, on, off } = await scan();

    // Discovery: one HA device for the network with its entities, sharing availability.
    const docs: Record<string, Record<string, any>> = {};
    for (const [component, name] of HA_ENTITIES) {
      const doc = json(await ha.next(configTopic(component, name)));
      expect(doc).toMatchObject({
        unique_id: `netwarden_${id}_${name}`,
        availability_topic: `${topicPrefix}/status`,
        payload_available: 'online',
        payload_not_available: 'offline',
        device: { identifiers: [`netwarden_${id}`], name: `Netwarden ${subnet}`, manufacturer: 'Netwarden' },
      });
      expect(typeof doc.name).toBe('string');
      expect(doc.state_topic).toBe(name === 'new_device' ? `${topicPrefix}/${id}/new_device` : stateTopic);
      docs[name] = doc;
    }
    expect(docs.devices_online).toMatchObject({ name: 'Devices online', state_class: 'measurement' });
    expect(docs.devices_at_risk).toMatchObject({ name: 'Devices at risk', state_class: 'measurement' });
    expect(docs.scan_running).toMatchObject({ name: 'Scan running', device_class: 'running', payload_on: 'ON', payload_off: 'OFF' });
    expect(docs.new_device).toMatchObject({ name: 'New device', event_types: ['device_added'] });
    // Discovery went out once, not with every state.
    expect(ha.messages.filter((m) => m.topic === configTopic('sensor', 'devices_online'))).toHaveLength(1);
    await ha.next(`${topicPrefix}/status`, (m) => m.payload === 'online');

    // Scan running: ON (published when the scan started, carrying the running scan), then OFF.
    const states = statesOf(scanId);
    expect(states.indexOf(on)).toBeLessThan(states.indexOf(off));
    expect(json(on).last_scan.status).toBe('running');
    expect(render(docs.scan_running.value_template, json(on) as State)).toBe('ON');
    expect(render(docs.scan_running.value_template, json(off) as State)).toBe('OFF');
    expect(json(off).last_scan.status).toBe('completed');
    // Every loopback address answers: the 14 hosts of the /28 but the excluded one.
    expect(render(docs.devices_online.value_template, json(off) as State)).toBe('13');

    // The first scan of a subnet is the baseline: no changes, so nothing on <prefix>/events.
    expect(await settledDeliveries()).toEqual([]);
    expect(ha.messages.filter((m) => m.topic === `${topicPrefix}/events`)).toEqual([]);
  });

  it('second scan: the counts match the API, the changes arrive as one message, the new device as one event, and the delivery is sent', async () => {
    const config = await server.request('/api/config', { method: 'PUT', key, json: { network: { exclude: [] } } });
    expect(config.status, await config.clone().text()).toBe(200);
    listeners.push(
      await bannerListener(host(1), 'SSH-2.0-OpenSSH_9.6\r\n', newPort),
      await bannerListener(host(3), 'SSH-2.0-OpenSSH_9.6\r\n', newPort),
    );
    const { scanId, on, off } = await scan();
    const states = statesOf(scanId);
    expect(states.indexOf(on)).toBeLessThan(states.indexOf(off));
    // The last state of the network is this OFF (nothing about the scan came after it).
    const last = ha.messages.filter((m) => m.topic === stateTopic).at(-1);
    expect(last).toBe(off);

    // Devices online / at risk, as HA renders them, equal what the API says about this subnet
    // (the only network in this database, so /api/stats counts the same devices).
    const docOf = async (component: string, name: string) => json(await ha.next(configTopic(component, name)));
    const state = json(off) as State;
    const stats = await readJson(await server.request('/api/stats', { key }));
    const devices = (await readJson(await server.request('/api/devices?limit=1000', { key }))) as {
      ip_address: string;
      online: boolean;
      risk_level: string;
    }[];
    const inSubnet = devices.filter((d) => d.ip_address.startsWith(base) && Number(d.ip_address.split('.')[3]) - first < 16);
    expect(inSubnet).toHaveLength(14);
    const online = inSubnet.filter((d) => d.online).length;
    const atRisk = inSubnet.filter((d) => ['critical', 'high', 'medium'].includes(d.risk_level)).length;
    expect(online).toBe(14);
    expect(atRisk).toBeGreaterThanOrEqual(1); // the FTP server
    expect(render((await docOf('sensor', 'devices_online')).value_template, state)).toBe(String(online));
    expect(render((await docOf('sensor', 'devices_at_risk')).value_template, state)).toBe(String(atRisk));
    expect(stats).toMatchObject({ online_devices: online, devices_at_risk: atRisk });
    expect(state).toMatchObject({ subnet, scan_running: false, last_scan: { scan_id: scanId, status: 'completed' } });
    expect(render((await docOf('sensor', 'last_scan')).value_template, state)).toBe(state.last_scan_at);

    // The changes of the scan: the new port on .1 and the new device .3 (with its port).
    const changes = (await readJson(await server.request(`/api/changes?scan_id=${scanId}`, { key }))) as {
      id: number;
      change_type: string;
      device_ip: string;
      port: number | null;
    }[];
    expect(changes.some((c) => c.change_type === 'port_opened' && c.device_ip === host(1) && c.port === newPort)).toBe(true);
    expect(changes.some((c) => c.change_type === 'device_added' && c.device_ip === host(3))).toBe(true);
    expect(changes.length).toBeGreaterThanOrEqual(2);

    // One delivery for the scan, sent on the first attempt.
    const deliveries = await settledDeliveries();
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ event: 'scan.changes', scan_id: scanId, status: 'sent', attempts: 1, last_error: null });

    // ONE message on <prefix>/events carrying every change of the scan.
    const events = ha.messages.filter((m) => m.topic === `${topicPrefix}/events`);
    expect(events).toHaveLength(1);
    expect(events[0].retain).toBe(false);
    const message = json(events[0]);
    expect(message).toMatchObject({
      event: 'scan.changes',
      delivery_id: deliveries[0].id,
      title: `Netwarden: ${changes.length} changes on ${subnet}`,
      scan: { scan_id: scanId, subnet, status: 'completed' },
    });
    expect(message.changes.map((c: { id: number }) => c.id).sort()).toEqual(changes.map((c) => c.id).sort());

    // The new device as one Home Assistant event on the network's event entity.
    const added = ha.messages.filter((m) => m.topic === `${topicPrefix}/${id}/new_device`);
    expect(added).toHaveLength(1);
    expect(added[0].retain).toBe(false);
    expect(json(added[0])).toMatchObject({ event_type: 'device_added', ip: host(3), scan_id: scanId });
  });

  it('Home Assistant starting later gets the discovery documents and the last state from the broker (retained)', async () => {
    const late = await subscriber(broker.url, [`${discoveryPrefix}/#`, stateTopic, `${topicPrefix}/status`]);
    try {
      for (const [component, name] of HA_ENTITIES) {
        const message = await late.next(configTopic(component, name));
        expect(message.retain).toBe(true);
        expect(json(message)).toMatchObject({ unique_id: `netwarden_${id}_${name}` });
      }
      const state = await late.next(stateTopic);
      expect(state.retain).toBe(true);
      expect(state.payload).toBe(ha.messages.filter((m) => m.topic === stateTopic).at(-1)!.payload);
      expect(json(state)).toMatchObject({ scan_running: false, last_scan: { status: 'completed' } });
      expect(await late.next(`${topicPrefix}/status`)).toMatchObject({ payload: 'online', retain: true });
    } finally {
      await late.close();
    }
  });
});

/**
 * A scan's "started" state must never land after its "finished" one, or Home Assistant shows the
 * scan running until the next scan. Here the started publication is held back (as a slow database
 * or broker would) until the finished one is under way or the scan has been over for a while; the
 * states must still reach the broker in the order of the scan.
 */
describe.each(testDatabases())('MQTT state publications keep the order of the scan ($kind)', (database) => {
  const subnet = database.kind === 'sqlite' ? '127.0.9.48/30' : '127.0.9.52/30';
  const id = subnet.replace(/[./]/g, '_');
  const topicPrefix = uniqueTopicPrefix('nwe2e');
  const discoveryPrefix = uniqueTopicPrefix('hae2e');
  const stateTopic = `${topicPrefix}/${id}/state`;

  it('publishes ON then OFF even when the ON publication is slow', async () => {
    const broker = await testBroker();
    const ha = await subscriber(broker.url, [`${topicPrefix}/#`]);
    let finishCalled!: () => void;
    const finishing = new Promise<void>((resolve) => (finishCalled = resolve));
    let scanOver!: () => void;
    const over = new Promise<void>((resolve) => (scanOver = resolve));
    const slowStart: ChannelDriver<object> = {
      ...mqttDriver,
      publishState: async (config, networks, context) => {
        if (networks[0]?.scan_running) await Promise.race([finishing, over.then(() => new Promise((r) => setTimeout(r, 500)))]);
        else finishCalled();
        return mqttDriver.publishState!(config as MqttConfig, networks, context);
      },
    };
    const port = await closedPort('127.0.0.1');
    const { server, key } = await startServerWithAdmin(database, {
      notifier: { drivers: { ...DRIVERS, mqtt: slowStart } },
      settings: { scanning: { engine: 'native', port_range: String(port), host_timeout_seconds: 30, os_detection: false } },
    });
    const stopListening = server.app.services.events.subscribe((event) => {
      if (event.name === 'scan_finished') scanOver();
    });
    try {
      const res = await server.request('/api/notifications/channels', {
        method: 'POST',
        key,
        json: {
          name: 'HA',
          type: 'mqtt',
          config: { url: broker.url, topic_prefix: topicPrefix, discovery_prefix: discoveryPrefix, ha_discovery: false },
        },
      });
      expect(res.status, await res.clone().text()).toBe(201);
      const { scan_id: scanId } = await triggerScan(server, key, { subnet, profile: 'normal' });
      expect((await waitForScan(server, key, scanId)).status).toBe('completed');
      await server.app.services.notifier.idle();
      await ha.next(stateTopic, (m) => json(m).last_scan?.scan_id === scanId && json(m).scan_running === false);
      const states = ha.messages.filter((m) => m.topic === stateTopic).map((m) => json(m).scan_running as boolean);
      expect(states).toEqual([true, false]);
    } finally {
      stopListening();
      await server.close();
      await ha.close();
      const client = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0, connectTimeout: 5000 }).catch(() => null);
      if (client) {
        await Promise.all([`${topicPrefix}/status`, stateTopic].map((t) => client.publishAsync(t, '', { qos: 1, retain: true })));
        await client.endAsync();
      }
      await broker.close();
    }
  });
});
