/**
 * MQTT brokers for tests, and a subscriber to watch what reaches them.
 *
 * `testBroker()` uses the Mosquitto that runs on development machines at 127.0.0.1:1883 when it
 * answers, and otherwise starts an in-process aedes broker on 127.0.0.1 (a random port), so the
 * tests run anywhere. `aedesBroker()` always starts aedes: the tests call it too, so both paths
 * are exercised, and it is the broker to use for what Mosquitto's default config cannot show
 * (authentication, TLS, dropping a client's connection). Several test runs may share the
 * Mosquitto: give every test its own topic prefixes (`uniqueTopicPrefix()`).
 */
import { randomBytes } from 'node:crypto';
import { connect as tcpConnect, createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { Aedes, type AedesOptions, type Client } from 'aedes';
import mqtt, { type MqttClient } from 'mqtt';

export interface TestBroker {
  kind: 'mosquitto' | 'aedes';
  url: string;
  /** aedes only: the broker-side clients, to drop a connection the way a network failure would. */
  clients: Client[];
  close(): Promise<void>;
}

export const MOSQUITTO_URL = 'mqtt://127.0.0.1:1883';

/** The local Mosquitto when it answers, else a fresh aedes broker. */
export async function testBroker(): Promise<TestBroker> {
  if (await reachable('127.0.0.1', 1883)) {
    return { kind: 'mosquitto', url: MOSQUITTO_URL, clients: [], close: async () => {} };
  }
  return aedesBroker();
}

export interface AedesBrokerOptions {
  /** Accept only this user name and password. */
  credentials?: { username: string; password: string };
  /** Serve `mqtts://` with this key and certificate. */
  tls?: { key: string; cert: string };
}

/** An in-process aedes broker on 127.0.0.1 and a random port. */
export async function aedesBroker(options: AedesBrokerOptions = {}): Promise<TestBroker> {
  const aedesOptions: AedesOptions = {};
  const { credentials } = options;
  if (credentials) {
    aedesOptions.authenticate = (_client, username, password, done) => {
      if (username === credentials.username && password?.toString() === credentials.password) return done(null, true);
      const error = Object.assign(new Error('bad user name or password'), { returnCode: 4 as const });
      return done(error, false);
    };
  }
  const broker = await Aedes.createBroker(aedesOptions);
  const clients: Client[] = [];
  broker.on('client', (client) => clients.push(client));
  const sockets = new Set<Socket>();
  const handle = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    broker.handle(socket);
  };
  const server: Server = options.tls ? createTlsServer({ key: options.tls.key, cert: options.tls.cert }, handle) : createServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no TCP address');
  return {
    kind: 'aedes',
    url: `${options.tls ? 'mqtts' : 'mqtt'}://127.0.0.1:${address.port}`,
    clients,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => broker.close(() => resolve()));
    },
  };
}

/** The Home Assistant entities (component, key) the MQTT channel announces for each network. */
export const HA_ENTITIES = [
  ['sensor', 'devices_online'],
  ['sensor', 'devices_at_risk'],
  ['sensor', 'last_scan'],
  ['binary_sensor', 'scan_running'],
  ['event', 'new_device'],
] as const;

/** A prefix no other test (or test run sharing the broker) uses. */
export function uniqueTopicPrefix(base: string): string {
  return `${base}_${randomBytes(5).toString('hex')}`;
}

export interface ReceivedMessage {
  topic: string;
  payload: string;
  retain: boolean;
}

export interface Subscriber {
  messages: ReceivedMessage[];
  /** Waits until a message on `topic` arrives that `match` accepts (every message when omitted). */
  next(topic: string, match?: (m: ReceivedMessage) => boolean, timeoutMs?: number): Promise<ReceivedMessage>;
  close(): Promise<void>;
}

/** A second client subscribed to `filters` (QoS 1), collecting every message it receives. */
export async function subscriber(url: string, filters: string[], options: { ca?: string } = {}): Promise<Subscriber> {
  const client: MqttClient = await mqtt.connectAsync(url, { reconnectPeriod: 0, connectTimeout: 5000, ca: options.ca });
  const messages: ReceivedMessage[] = [];
  const waiters = new Set<() => void>();
  client.on('message', (topic, payload, packet) => {
    messages.push({ topic, payload: payload.toString(), retain: packet.retain });
    for (const wake of waiters) wake();
  });
  await client.subscribeAsync(filters, { qos: 1 });
  return {
    messages,
    next(topic, match = () => true, timeoutMs = 10_000) {
      return new Promise<ReceivedMessage>((resolve, reject) => {
        const find = () => messages.find((m) => m.topic === topic && match(m));
        const found = find();
        if (found) return resolve(found);
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no message on ${topic} within ${timeoutMs} ms (got ${messages.map((m) => m.topic).join(', ') || 'nothing'})`));
        }, timeoutMs);
        const check = () => {
          const hit = find();
          if (!hit) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(hit);
        };
        waiters.add(check);
      });
    },
    close: () => client.endAsync(true),
  };
}

function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
