/**
 * The MQTT channel against real brokers: the local Mosquitto when it runs (else aedes) and an
 * in-process aedes broker, each watched by a second client. Every test uses its own topic and
 * discovery prefixes, so runs sharing one Mosquitto do not see each other, and clears the
 * retained messages it left.
 */
import mqtt from 'mqtt';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type MqttConfig, mqttDriver } from '../../src/notify/channels/mqtt.js';
import type { NetworkState } from '../../src/notify/types.js';
import { closedPort, silentListener } from '../helpers/listeners.js';
import { HA_ENTITIES, aedesBroker, type Subscriber, subscriber, type TestBroker, testBroker, uniqueTopicPrefix } from '../helpers/mqtt-broker.js';
import { SUBNET, deliveryFailure, sampleMessage, sampleScan, sendContext, testCertificate } from './email-mqtt-fixtures.js';

const ID = '192_168_77_0_24';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  // The driver's connections first (they say offline), then subscribers and brokers.
  await mqttDriver.close?.();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  await mqttDriver.close?.();
});

function network(overrides: Partial<NetworkState> = {}): NetworkState {
  return { subnet: SUBNET, devices_online: 7, devices_at_risk: 2, scan_running: false, last_scan: sampleScan(), ...overrides };
}

interface Setup {
  broker: TestBroker;
  config: MqttConfig;
  topicPrefix: string;
  discoveryPrefix: string;
  watch(): Promise<Subscriber>;
}

async function setup(brokerKind: 'default' | 'aedes', overrides: Partial<MqttConfig> = {}): Promise<Setup> {
  const broker = brokerKind === 'aedes' ? await aedesBroker() : await testBroker();
  const topicPrefix = uniqueTopicPrefix('nwtest');
  const discoveryPrefix = uniqueTopicPrefix('hatest');
  cleanups.push(() => broker.close());
  // Retained messages outlive the test on a shared Mosquitto: clear every one this test can leave.
  cleanups.push(() => clearRetained(broker.url, [`${topicPrefix}/status`, `${topicPrefix}/${ID}/state`, ...discoveryTopics(discoveryPrefix)]));
  return {
    broker,
    topicPrefix,
    discoveryPrefix,
    config: { url: broker.url, topic_prefix: topicPrefix, discovery_prefix: discoveryPrefix, ha_discovery: true, ...overrides },
    watch: async () => {
      const s = await subscriber(broker.url, [`${topicPrefix}/#`, `${discoveryPrefix}/#`]);
      cleanups.push(() => s.close());
      return s;
    },
  };
}

function discoveryTopics(discoveryPrefix: string): string[] {
  return HA_ENTITIES.map(([component, key]) => `${discoveryPrefix}/${component}/netwarden_${ID}_${key}/config`);
}

async function clearRetained(url: string, topics: string[]): Promise<void> {
  const client = await mqtt.connectAsync(url, { reconnectPeriod: 0, connectTimeout: 5000 }).catch(() => null);
  if (!client) return;
  await Promise.all(topics.map((t) => client.publishAsync(t, '', { qos: 1, retain: true })));
  await client.endAsync();
}

describe.each(['default', 'aedes'] as const)('mqtt channel on the %s broker', (brokerKind) => {
  it('publishes Home Assistant discovery and the state as retained messages, with availability', async () => {
    const s = await setup(brokerKind);
    await mqttDriver.publishState!(s.config, [network()], sendContext());

    // A subscriber arriving afterwards (Home Assistant starting up) gets it all from the broker.
    const ha = await s.watch();
    for (const [component, key] of HA_ENTITIES) {
      const topic = `${s.discoveryPrefix}/${component}/netwarden_${ID}_${key}/config`;
      const message = await ha.next(topic);
      expect(message.retain).toBe(true);
      const doc = JSON.parse(message.payload) as Record<string, unknown>;
      expect(doc).toMatchObject({
        unique_id: `netwarden_${ID}_${key}`,
        object_id: `netwarden_${ID}_${key}`,
        default_entity_id: `${component}.netwarden_${ID}_${key}`,
        availability_topic: `${s.topicPrefix}/status`,
        payload_available: 'online',
        payload_not_available: 'offline',
        device: { identifiers: [`netwarden_${ID}`], name: `Netwarden ${SUBNET}`, manufacturer: 'Netwarden', sw_version: '0.1.0-test' },
        origin: { name: 'Netwarden' },
      });
      expect(typeof doc.name).toBe('string');
      expect(doc.state_topic).toBe(key === 'new_device' ? `${s.topicPrefix}/${ID}/new_device` : `${s.topicPrefix}/${ID}/state`);
    }
    const configOf = async (component: string, key: string) =>
      JSON.parse((await ha.next(`${s.discoveryPrefix}/${component}/netwarden_${ID}_${key}/config`)).payload) as Record<string, unknown>;
    expect(await configOf('sensor', 'devices_online')).toMatchObject({
      value_template: '{{ value_json.devices_online }}',
      state_class: 'measurement',
    });
    expect(await configOf('sensor', 'devices_at_risk')).toMatchObject({ value_template: '{{ value_json.devices_at_risk }}' });
    expect(await configOf('sensor', 'last_scan')).toMatchObject({ device_class: 'timestamp', value_template: '{{ value_json.last_scan_at }}' });
    expect(await configOf('binary_sensor', 'scan_running')).toMatchObject({ device_class: 'running', payload_on: 'ON', payload_off: 'OFF' });
    expect(await configOf('event', 'new_device')).toMatchObject({ event_types: ['device_added'] });

    const state = await ha.next(`${s.topicPrefix}/${ID}/state`);
    expect(state.retain).toBe(true);
    expect(JSON.parse(state.payload)).toMatchObject({
      subnet: SUBNET,
      devices_online: 7,
      devices_at_risk: 2,
      scan_running: false,
      last_scan_at: '2026-11-25T10:02:00.000Z',
      last_scan: { scan_id: 12, status: 'completed', devices_found: 7 },
    });
    const status = await ha.next(`${s.topicPrefix}/status`);
    expect(status).toMatchObject({ payload: 'online', retain: true });
  });

  it('publishes a new state each time, and says offline when closed', async () => {
    const s = await setup(brokerKind);
    const ha = await s.watch();
    await mqttDriver.publishState!(s.config, [network({ scan_running: true, last_scan: null })], sendContext());
    const running = await ha.next(`${s.topicPrefix}/${ID}/state`, (m) => (JSON.parse(m.payload) as { scan_running: boolean }).scan_running);
    expect(JSON.parse(running.payload)).toMatchObject({ last_scan_at: null, last_scan: null });

    await mqttDriver.publishState!(s.config, [network({ devices_online: 8 })], sendContext());
    await ha.next(`${s.topicPrefix}/${ID}/state`, (m) => (JSON.parse(m.payload) as { devices_online: number }).devices_online === 8);
    // Discovery went out once on this connection, not with every state.
    const configs = ha.messages.filter((m) => m.topic === `${s.discoveryPrefix}/sensor/netwarden_${ID}_devices_online/config`);
    expect(configs).toHaveLength(1);

    await mqttDriver.close!();
    await ha.next(`${s.topicPrefix}/status`, (m) => m.payload === 'offline');
  });

  it('publishes each notification as JSON on <prefix>/events, and each new device as a Home Assistant event', async () => {
    const s = await setup(brokerKind);
    await mqttDriver.publishState!(s.config, [network()], sendContext());
    const watcher = await s.watch();
    await mqttDriver.send(s.config, sampleMessage(), sendContext());

    const event = await watcher.next(`${s.topicPrefix}/events`);
    expect(event.retain).toBe(false);
    const body = JSON.parse(event.payload) as Record<string, unknown>;
    expect(body).toMatchObject({
      event: 'scan.changes',
      delivery_id: 42,
      sent_at: '2026-11-25T10:02:05.000Z',
      title: `Netwarden: 2 changes on ${SUBNET}`,
      severity: 'high',
      scan: { scan_id: 12, subnet: SUBNET },
    });
    expect(body.changes).toHaveLength(2);

    const added = await watcher.next(`${s.topicPrefix}/${ID}/new_device`);
    expect(added.retain).toBe(false);
    expect(JSON.parse(added.payload)).toMatchObject({
      event_type: 'device_added',
      ip: '192.168.77.5',
      mac: 'aa:bb:cc:dd:ee:01',
      name: '192.168.77.5 "<script>alert(1)</script>"',
      scan_id: 12,
    });
    expect(watcher.messages.filter((m) => m.topic.endsWith('/new_device'))).toHaveLength(1);
  });
});

describe('mqtt channel: discovery off, digests, failures', () => {
  it('with ha_discovery off publishes the state but no discovery (and removes documents published before)', async () => {
    const s = await setup('default');
    await mqttDriver.publishState!(s.config, [network()], sendContext());
    await mqttDriver.close!();

    const watcher = await s.watch();
    await watcher.next(discoveryTopics(s.discoveryPrefix)[0]);
    await mqttDriver.publishState!({ ...s.config, ha_discovery: false }, [network({ devices_online: 3 })], sendContext());
    await watcher.next(`${s.topicPrefix}/${ID}/state`, (m) => (JSON.parse(m.payload) as { devices_online: number }).devices_online === 3);
    for (const topic of discoveryTopics(s.discoveryPrefix)) await watcher.next(topic, (m) => m.payload === '');

    // Nothing retained is left under the discovery prefix.
    const late = await subscriber(s.broker.url, [`${s.discoveryPrefix}/#`, `${s.topicPrefix}/${ID}/state`]);
    cleanups.push(() => late.close());
    await late.next(`${s.topicPrefix}/${ID}/state`);
    expect(late.messages.filter((m) => m.topic.startsWith(`${s.discoveryPrefix}/`) && m.payload !== '')).toEqual([]);
  });

  it('places the new devices of a digest (no scan) in the watched network that contains them', async () => {
    const s = await setup('aedes');
    await mqttDriver.publishState!(s.config, [network({ subnet: '10.9.0.0/16' }), network()], sendContext());
    const watcher = await s.watch();
    await mqttDriver.send(s.config, sampleMessage({ event: 'digest', scan: null }), sendContext());
    const added = await watcher.next(`${s.topicPrefix}/${ID}/new_device`);
    expect(JSON.parse(added.payload)).toMatchObject({ ip: '192.168.77.5' });
  });

  it('a test message goes to <prefix>/events only', async () => {
    const s = await setup('aedes');
    const watcher = await s.watch();
    await mqttDriver.send(s.config, sampleMessage({ event: 'test' }), sendContext());
    await watcher.next(`${s.topicPrefix}/events`, (m) => (JSON.parse(m.payload) as { event: string }).event === 'test');
    expect(watcher.messages.filter((m) => m.topic.endsWith('/new_device'))).toEqual([]);
  });

  it('when the connection dies the broker publishes the last will (offline); the client reconnects and says online', async () => {
    const s = await setup('aedes');
    await mqttDriver.publishState!(s.config, [network()], sendContext());
    const watcher = await s.watch();
    await watcher.next(`${s.topicPrefix}/status`, (m) => m.payload === 'online');
    const driverClient = s.broker.clients.find((c) => c.id.startsWith('netwarden_'));
    expect(driverClient).toBeDefined();
    driverClient!.conn.destroy();
    await watcher.next(`${s.topicPrefix}/status`, (m) => m.payload === 'offline');
    const before = watcher.messages.length;
    await watcher.next(`${s.topicPrefix}/status`, (m) => m.payload === 'online' && watcher.messages.indexOf(m) >= before, 20_000);
    // And it delivers again.
    await mqttDriver.send(s.config, sampleMessage(), sendContext());
    await watcher.next(`${s.topicPrefix}/events`);
  });

  it('an unreachable broker is a retryable failure within the timeout', async () => {
    const config: MqttConfig = { url: `mqtt://127.0.0.1:${await closedPort('127.0.0.1')}` };
    const error = await deliveryFailure(mqttDriver.send(config, sampleMessage(), sendContext(2000)));
    expect(error.retryable).toBe(true);
    const again = await deliveryFailure(mqttDriver.publishState!(config, [network()], sendContext(2000)));
    expect(again.retryable).toBe(true);
  });

  it('a broker that accepts the connection but never answers is a retryable failure at the timeout', async () => {
    const silent = await silentListener('127.0.0.1');
    cleanups.push(() => silent.close());
    const error = await deliveryFailure(mqttDriver.send({ url: `mqtt://127.0.0.1:${silent.port}` }, sampleMessage(), sendContext(400)));
    expect(error.retryable).toBe(true);
  });

  it('logs in with username and password; a wrong password is a permanent failure', async () => {
    const broker = await aedesBroker({ credentials: { username: 'netwarden', password: 'correct horse' } });
    cleanups.push(() => broker.close());
    const topicPrefix = uniqueTopicPrefix('nwtest');
    const watcher = await subscriber(broker.url.replace('mqtt://', 'mqtt://netwarden:correct%20horse@'), [`${topicPrefix}/#`]);
    cleanups.push(() => watcher.close());

    await mqttDriver.send(
      { url: broker.url, username: 'netwarden', password: 'correct horse', topic_prefix: topicPrefix },
      sampleMessage(),
      sendContext(),
    );
    await watcher.next(`${topicPrefix}/events`);

    const error = await deliveryFailure(
      mqttDriver.send({ url: broker.url, username: 'netwarden', password: 'wrong', topic_prefix: topicPrefix }, sampleMessage(), sendContext()),
    );
    expect(error.retryable).toBe(false);
    expect(error.message).not.toContain('wrong');
  });

  it('a user name whose password was cleared fails permanently, naming config.password', async () => {
    const error = await deliveryFailure(
      mqttDriver.send({ url: 'mqtt://127.0.0.1:1', username: 'netwarden', password: null }, sampleMessage(), sendContext()),
    );
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/^config\.password: /);
  });

  it('speaks mqtts:// to a self-signed broker trusted through tls_ca, and refuses it otherwise', async () => {
    const { key, cert } = await testCertificate();
    const broker = await aedesBroker({ tls: { key, cert } });
    cleanups.push(() => broker.close());
    const topicPrefix = uniqueTopicPrefix('nwtest');
    const watcher = await subscriber(broker.url, [`${topicPrefix}/#`], { ca: cert });
    cleanups.push(() => watcher.close());

    await mqttDriver.send({ url: broker.url, topic_prefix: topicPrefix, tls_ca: cert }, sampleMessage(), sendContext());
    await watcher.next(`${topicPrefix}/events`);

    const error = await deliveryFailure(
      mqttDriver.send({ url: broker.url, topic_prefix: `${topicPrefix}_untrusted` }, sampleMessage(), sendContext()),
    );
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/certificate/i);
  });
});

describe('mqtt channel: check()', () => {
  const valid: MqttConfig = { url: 'mqtt://192.168.1.2:1883', topic_prefix: 'netwarden', discovery_prefix: 'homeassistant' };

  it('accepts mqtt:// and mqtts:// brokers and nested prefixes', () => {
    expect(mqttDriver.check(valid)).toBeNull();
    expect(mqttDriver.check({ url: 'mqtts://broker.example:8883/' })).toBeNull();
    expect(mqttDriver.check({ ...valid, topic_prefix: 'home/lab/netwarden' })).toBeNull();
  });

  it.each([
    [{ url: 'http://broker.example' }, /^config\.url: .*mqtt:\/\//],
    [{ url: 'ws://broker.example' }, /^config\.url: /],
    [{ url: 'not a url' }, /^config\.url: /],
    [{ url: 'mqtt://user:pass@broker.example' }, /^config\.url: .*username and password/],
    [{ url: 'mqtt://broker.example/some/path' }, /^config\.url: /],
    [{ topic_prefix: 'netwarden/#' }, /^config\.topic_prefix: .*wildcards/],
    [{ topic_prefix: 'net+warden' }, /^config\.topic_prefix: .*wildcards/],
    [{ topic_prefix: '/netwarden' }, /^config\.topic_prefix: .*start or end/],
    [{ topic_prefix: 'netwarden/' }, /^config\.topic_prefix: .*start or end/],
    [{ topic_prefix: 'home//netwarden' }, /^config\.topic_prefix: .*empty level/],
    [{ topic_prefix: 'net\u0000warden' }, /^config\.topic_prefix: .*NUL/],
    [{ topic_prefix: '' }, /^config\.topic_prefix: /],
    [{ topic_prefix: '$SYS/netwarden' }, /^config\.topic_prefix: .*\$/],
    [{ discovery_prefix: 'homeassistant/#' }, /^config\.discovery_prefix: .*wildcards/],
    [{ discovery_prefix: 'homeassistant/' }, /^config\.discovery_prefix: /],
    [{ password: 'secret' }, /^config\.username: /],
    [{ tls_ca: 'nope' }, /^config\.tls_ca: /],
  ] as [Partial<MqttConfig>, RegExp][])('rejects %j', (overrides, message) => {
    expect(mqttDriver.check({ ...valid, ...overrides })).toMatch(message);
  });

  it('binds the password to the broker, user name and TLS trust, and declares the defaults of CONTRACT §13', () => {
    expect(mqttDriver.secretKeys).toEqual(['password']);
    expect(mqttDriver.destinationKeys).toEqual(expect.arrayContaining(['url', 'username', 'tls_ca', 'tls_reject_unauthorized']));
    const props = mqttDriver.configSchema.properties as Record<string, { default?: unknown }>;
    expect(props.topic_prefix.default).toBe('netwarden');
    expect(props.ha_discovery.default).toBe(true);
    expect(props.discovery_prefix.default).toBe('homeassistant');
    expect(mqttDriver.configSchema.required).toEqual(['url']);
  });
});
