/**
 * The MQTT channel's connections: one long-lived client per distinct connection config (broker
 * URL, credentials, TLS trust, topic prefix), because Home Assistant's availability needs one: the
 * client publishes `online` (retained) on `<prefix>/status` each time it connects and leaves a last
 * will of `offline`, which the broker publishes when Netwarden goes away without saying goodbye.
 * `closeAll()` (the driver's close(), at shutdown) publishes `offline` itself and disconnects.
 *
 * Waiting is always bounded by the attempt's budget (SendContext): a broker that is down, refuses
 * the connection or never answers fails the attempt as a DeliveryError and never hangs it. After a
 * first successful connection the client reconnects by itself in the background; a client whose
 * first connection fails is dropped, and the next attempt starts afresh.
 *
 * The driver interface gives no channel id, so clients are keyed by their config: a channel whose
 * config changes gets a new client, and the old one is closed once unused for IDLE_CLOSE_MS.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import type { IClientOptions, MqttClient } from 'mqtt';
import { DeliveryError } from '../types.js';
import { type Publication, statusTopic } from './mqtt-topics.js';

/** What a connection is made from (the channel config's connection part, defaults applied). */
export interface MqttConnectionConfig {
  url: string;
  username: string | null;
  password: string | null;
  topicPrefix: string;
  tlsCa: string | null;
  tlsRejectUnauthorized: boolean;
  /** The broker's address as the outbound guard checked it (connected to instead of the name). */
  address?: string;
}

/** A connection unused this long is closed (its status then reads offline until the next use). */
export const IDLE_CLOSE_MS = 24 * 60 * 60 * 1000;
/** Pause between reconnection attempts of a client that was connected once. */
const RECONNECT_MS = 5000;
/** How long closing may wait for the broker to take the `offline` message. */
const CLOSE_WAIT_MS = 2000;

export interface MqttConnection {
  client: MqttClient;
  config: MqttConnectionConfig;
  /** Networks whose discovery documents went out on the current connection (sent again after a reconnect). */
  announced: Set<string>;
  /** Subnets of the last publishState, to place new-device events of a digest (no scan) in their network. */
  knownSubnets: string[];
}

interface Entry extends MqttConnection {
  key: string;
  lastError: Error | null;
  /** A refusal the broker will repeat (bad credentials, not authorized): retrying cannot help. */
  refusedForGood: boolean;
  /** Connected at least once: from then on the client reconnects by itself. */
  everConnected: boolean;
  idleTimer: NodeJS.Timeout | null;
}

export class MqttConnections {
  private readonly entries = new Map<string, Entry>();

  /** A connected client for `config`, connecting or waiting for a reconnection within the attempt's budget. */
  async acquire(config: MqttConnectionConfig, signal: AbortSignal, timeoutMs: number): Promise<MqttConnection> {
    const key = connectionKey(config);
    let entry = this.entries.get(key);
    if (!entry) {
      entry = this.open(key, config, timeoutMs);
      this.entries.set(key, entry);
    }
    this.touch(entry);
    if (entry.client.connected) return entry;
    try {
      await waitConnected(entry, signal, timeoutMs);
      return entry;
    } catch (error) {
      // A client that never connected, or was refused for good, is not kept reconnecting.
      if (entry.refusedForGood || !entry.everConnected) this.drop(entry);
      throw error;
    }
  }

  /**
   * Publishes in order (one connection keeps it) and waits for the broker's acknowledgements
   * (QoS 1) within the attempt's budget.
   */
  publish(connection: MqttConnection, publications: Publication[], signal: AbortSignal): Promise<void> {
    return publishWithin(connection.client, publications, signal);
  }

  /** Says `offline` and disconnects every client (shutdown). */
  async closeAll(): Promise<void> {
    const entries = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(entries.map((entry) => closeEntry(entry)));
  }

  private open(key: string, config: MqttConnectionConfig, timeoutMs: number): Entry {
    const status = statusTopic(config.topicPrefix);
    const options: IClientOptions = {
      clientId: `netwarden_${randomBytes(6).toString('hex')}`,
      clean: true,
      protocolVersion: 4,
      connectTimeout: Math.max(1, timeoutMs),
      reconnectPeriod: RECONNECT_MS,
      keepalive: 60,
      username: config.username ?? undefined,
      password: config.password ?? undefined,
      will: { topic: status, payload: Buffer.from('offline'), qos: 1, retain: true },
      ca: config.tlsCa ?? undefined,
      rejectUnauthorized: config.tlsRejectUnauthorized,
    };
    const hostname = new URL(config.url).hostname.replace(/^\[|\]$/g, '');
    if (config.address && config.address !== hostname) {
      // Connect to the address the outbound guard checked; the name is still the one TLS verifies.
      options.host = config.address;
      if (isIP(hostname) === 0) options.servername = hostname;
    }
    const client = mqttLibrary().connect(config.url, options);
    const entry: Entry = {
      key,
      client,
      config,
      announced: new Set(),
      knownSubnets: [],
      lastError: null,
      refusedForGood: false,
      everConnected: false,
      idleTimer: null,
    };
    client.on('connect', () => {
      entry.lastError = null;
      entry.refusedForGood = false;
      entry.announced.clear();
      entry.everConnected = true;
      // Birth message; the will says offline. Failure here shows up on the next publish anyway.
      client.publish(status, 'online', { qos: 1, retain: true }, () => {});
    });
    // An EventEmitter 'error' without a listener would throw out of the process.
    client.on('error', (error) => {
      entry.lastError = error;
      if (isRefusedForGood(error)) entry.refusedForGood = true;
    });
    return entry;
  }

  private touch(entry: Entry): void {
    if (entry.idleTimer) clearTimeout(entry.idleTimer);
    entry.idleTimer = setTimeout(() => {
      if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
      void closeEntry(entry);
    }, IDLE_CLOSE_MS);
    // An idle connection must not keep the process alive (the client's own socket does until close).
    entry.idleTimer.unref();
  }

  private drop(entry: Entry): void {
    if (entry.idleTimer) clearTimeout(entry.idleTimer);
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
    entry.client.end(true);
  }
}

async function closeEntry(entry: Entry): Promise<void> {
  if (entry.idleTimer) clearTimeout(entry.idleTimer);
  const { client } = entry;
  if (client.connected) {
    const signal = AbortSignal.timeout(CLOSE_WAIT_MS);
    await publishWithin(client, [{ topic: statusTopic(entry.config.topicPrefix), payload: 'offline', retain: true }], signal).catch(() => {});
  }
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => client.end(true, () => resolve()), CLOSE_WAIT_MS);
    client.end(false, () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A stable key for a connection config; hashed so the password is not kept twice in memory. */
function connectionKey(config: MqttConnectionConfig): string {
  return createHash('sha256').update(JSON.stringify(config)).digest('hex');
}

/**
 * CONNACK refusals that the broker will repeat: 1 protocol, 2 client id, 4 bad credentials,
 * 5 not authorized (MQTT 3.1.1); 128–135 and 140 (MQTT 5). 3 (server unavailable) and 5's
 * 136/137/159 (unavailable, busy, rate) pass with time and stay retryable.
 */
function isRefusedForGood(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'number') return isCertificateError(error);
  return [1, 2, 4, 5, 128, 129, 130, 131, 132, 133, 134, 135, 140].includes(code);
}

/** A certificate that does not verify: a setting to fix, not a moment to wait out. */
function isCertificateError(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return (typeof code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) || /certificate|self[- ]signed/i.test(error.message);
}

function waitConnected(entry: Entry, signal: AbortSignal, timeoutMs: number): Promise<void> {
  const { client } = entry;
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const finish = (error: DeliveryError | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      client.off('connect', onConnect);
      client.off('close', onClose);
      client.off('error', onError);
      if (error) reject(error);
      else resolve();
    };
    const failure = (fallback: string) => {
      const cause = entry.lastError;
      if (cause && isCertificateError(cause)) {
        return new DeliveryError(`MQTT: the broker's certificate was not accepted (${cause.message}); trust it with config.tls_ca`, false);
      }
      if (entry.refusedForGood && cause) return new DeliveryError(`MQTT: the broker refused the connection: ${cause.message}`, false);
      return new DeliveryError(`MQTT: ${cause ? cause.message : fallback}`, true);
    };
    const onConnect = () => finish(null);
    const onError = (error: Error) => {
      entry.lastError = error;
      if (isRefusedForGood(error)) entry.refusedForGood = true;
      // Connection errors (refused, reset, DNS) end the attempt; the client may still be retrying.
      finish(failure(error.message));
    };
    const onClose = () => finish(failure('the connection closed before the broker accepted it'));
    const onAbort = () => finish(failure(`no connection within ${timeoutMs} ms`));
    const timer = setTimeout(onAbort, Math.max(1, timeoutMs));
    if (signal.aborted) return onAbort();
    if (entry.refusedForGood) return finish(failure('refused'));
    signal.addEventListener('abort', onAbort, { once: true });
    client.on('connect', onConnect);
    client.on('close', onClose);
    client.on('error', onError);
  });
}

function publishWithin(client: MqttClient, publications: Publication[], signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let pending = publications.length;
    let settled = false;
    const finish = (error: DeliveryError | null) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve();
    };
    // One listener for the whole batch (a listener per message would pile up on the signal).
    const onAbort = () => finish(new DeliveryError('MQTT: the broker did not acknowledge the messages in time', true));
    if (signal.aborted) return onAbort();
    if (pending === 0) return finish(null);
    signal.addEventListener('abort', onAbort, { once: true });
    for (const { topic, payload, retain } of publications) {
      client.publish(topic, payload, { qos: 1, retain }, (error) => {
        if (error) finish(new DeliveryError(`MQTT: publishing to ${topic} failed: ${error.message}`, true));
        else if (--pending === 0) finish(null);
      });
    }
  });
}

/**
 * The MQTT client library, loaded on first use: most installations have no MQTT channel, and it
 * is about 10 MB of the service's resident memory once loaded.
 */
function mqttLibrary(): typeof import('mqtt') {
  mqttModule ??= createRequire(import.meta.url)('mqtt') as typeof import('mqtt');
  return mqttModule;
}
let mqttModule: typeof import('mqtt') | undefined;
