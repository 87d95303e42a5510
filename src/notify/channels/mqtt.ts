/**
 * The `mqtt` channel (CONTRACT §13): notifications as JSON on `<topic_prefix>/events`, and, for
 * Home Assistant, the state of each watched network as retained messages with MQTT discovery
 * documents, so each network appears in HA as one device with its sensors without any YAML.
 * Topics and payloads: mqtt-topics.ts. Connections (one long-lived client per config, with
 * availability through a last will): mqtt-connections.ts. docs/notifications.md ("mqtt") shows
 * it all from a user's side.
 *
 * TLS (`mqtts://`) is verified against the system CAs; `tls_ca` trusts a private CA or a
 * self-signed broker, `tls_reject_unauthorized: false` turns verification off (last resort). The
 * password is bound to `url`, `username` and the TLS trust settings (the destination keys).
 */
import { type Static, Type } from '@sinclair/typebox';
import { isIpv4Address, networkContains, parseIpv4Network } from '../../core/net.js';
import { type ChannelDriver, DeliveryError, secretKeysOf, type NetworkState, type OutgoingMessage, type SendContext } from '../types.js';
import { resolveDestination } from '../http.js';
import { loginFields, tlsTrustFields } from './config-fields.js';
import { type MqttConnection, type MqttConnectionConfig, MqttConnections } from './mqtt-connections.js';
import {
  discoveryPublications,
  eventPayload,
  eventsTopic,
  networkId,
  newDevicePayload,
  newDeviceTopic,
  type Publication,
  statePayload,
  stateTopic,
  topicPrefixProblem,
} from './mqtt-topics.js';

export const MQTT_DEFAULT_TOPIC_PREFIX = 'netwarden';
export const MQTT_DEFAULT_DISCOVERY_PREFIX = 'homeassistant';

/**
 * The config. Keys with a default are optional, so the schema validates a config whether or not
 * the defaults were filled in first; the driver reads them with the same defaults.
 */
export const MqttConfig = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      title: 'Broker URL',
      'x-input': 'url',
      description: 'Broker: `mqtt://host:1883` or `mqtts://host:8883` (TLS).',
    }),
    ...loginFields('MQTT', 1024, 'omit for an anonymous broker'),
    topic_prefix: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        default: MQTT_DEFAULT_TOPIC_PREFIX,
        title: 'Topic prefix',
        description: 'First levels of every topic Netwarden publishes (`netwarden/events`, `netwarden/status`, …). No wildcards.',
      }),
    ),
    ha_discovery: Type.Optional(
      Type.Boolean({
        default: true,
        title: 'Home Assistant discovery',
        description: 'Publish Home Assistant MQTT discovery documents for each watched network.',
      }),
    ),
    discovery_prefix: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        default: MQTT_DEFAULT_DISCOVERY_PREFIX,
        title: 'Discovery prefix',
        description: "Home Assistant's discovery prefix (its MQTT integration's setting, `homeassistant` unless changed).",
      }),
    ),
    ...tlsTrustFields({
      caDescription: 'PEM certificate(s) to trust for an `mqtts://` broker besides the system CAs: a private CA or a self-signed certificate.',
      verifyTitle: 'Verify the broker certificate',
      verifyDescription: "Verify an `mqtts://` broker's certificate and name. Turn off only as a last resort: prefer `tls_ca`.",
    }),
  },
  {
    additionalProperties: false,
    title: 'MqttChannelConfig',
    description: 'type `mqtt`: events and state published to an MQTT broker (Home Assistant discovery)',
  },
);
export type MqttConfig = Static<typeof MqttConfig>;

export function checkMqttConfig(config: MqttConfig): string | null {
  const urlProblem = brokerUrlProblem(String(config.url ?? ''));
  if (urlProblem) return `config.url: ${urlProblem}`;
  const topic = topicPrefixProblem(config.topic_prefix ?? MQTT_DEFAULT_TOPIC_PREFIX);
  if (topic) return `config.topic_prefix: ${topic}`;
  const discovery = topicPrefixProblem(config.discovery_prefix ?? MQTT_DEFAULT_DISCOVERY_PREFIX);
  if (discovery) return `config.discovery_prefix: ${discovery}`;
  if (hasText(config.password) && !hasText(config.username)) return 'config.username: give the user name the password belongs to';
  if (hasText(config.tls_ca) && !/-----BEGIN CERTIFICATE-----/.test(config.tls_ca)) {
    return 'config.tls_ca: must be one or more PEM certificates (-----BEGIN CERTIFICATE-----)';
  }
  return null;
}

function brokerUrlProblem(text: string): string | null {
  const example = 'must be a broker URL such as mqtt://192.168.1.2:1883 or mqtts://broker.example:8883';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return example;
  }
  if (url.protocol !== 'mqtt:' && url.protocol !== 'mqtts:') return `${example} (mqtt:// or mqtts://)`;
  if (!url.hostname) return example;
  if (url.username || url.password) return 'give the credentials in username and password, not in the URL';
  if ((url.pathname !== '' && url.pathname !== '/') || url.search || url.hash) return `${example}, without a path or query`;
  return null;
}

const connections = new MqttConnections();

export const mqttDriver: ChannelDriver<MqttConfig> = {
  type: 'mqtt',
  configSchema: MqttConfig,
  secretKeys: secretKeysOf(MqttConfig),
  destinationKeys: ['url', 'username', 'tls_ca', 'tls_reject_unauthorized'],
  check: checkMqttConfig,
  send: sendMqtt,
  publishState,
  close: () => connections.closeAll(),
};

async function sendMqtt(config: MqttConfig, message: OutgoingMessage, context: SendContext): Promise<void> {
  const connection = await connect(config, context);
  const prefix = connection.config.topicPrefix;
  const publications: Publication[] = [{ topic: eventsTopic(prefix), payload: eventPayload(message), retain: false }];
  // A test message is not news for Home Assistant automations.
  if (message.event !== 'test') {
    for (const change of message.changes) {
      if (change.change_type !== 'device_added') continue;
      const subnet = networkOf(change.device_ip, connection, message);
      if (subnet) publications.push({ topic: newDeviceTopic(prefix, networkId(subnet)), payload: newDevicePayload(change, message), retain: false });
    }
  }
  await publishAll(connection, publications, context);
}

async function publishState(config: MqttConfig, networks: NetworkState[], context: SendContext): Promise<void> {
  const connection = await connect(config, context);
  const prefix = connection.config.topicPrefix;
  const discovery = config.ha_discovery ?? true;
  const options = { discoveryPrefix: config.discovery_prefix ?? MQTT_DEFAULT_DISCOVERY_PREFIX, topicPrefix: prefix, version: context.version };
  const publications: Publication[] = [];
  const announced: string[] = [];
  for (const network of networks) {
    const id = networkId(network.subnet);
    // Discovery documents go out once per connection (retained, the broker keeps them for HA);
    // with discovery off, empty retained documents remove entities published before.
    const mark = `${options.discoveryPrefix}\u0000${id}\u0000${discovery ? 'on' : 'off'}`;
    if (!connection.announced.has(mark)) {
      for (const p of discoveryPublications(options, network)) publications.push(discovery ? p : { ...p, payload: '' });
      announced.push(mark);
    }
    publications.push({ topic: stateTopic(prefix, id), payload: statePayload(network, new Date()), retain: true });
  }
  await publishAll(connection, publications, context);
  for (const mark of announced) connection.announced.add(mark);
  rememberSubnets(connection, networks);
}

async function connect(config: MqttConfig, context: SendContext): Promise<MqttConnection> {
  if (hasText(config.username) && !hasText(config.password)) {
    // Cleared when the destination changed (or never given): the broker would refuse anyway.
    throw new DeliveryError('config.password: not set (it is cleared when url or username change); enter it again', false);
  }
  // The broker's address is checked here and connected to as checked (the name stays the TLS name).
  const address = await resolveDestination(new URL(config.url).hostname, context);
  const connection: MqttConnectionConfig = {
    url: config.url,
    address,
    username: hasText(config.username) ? config.username : null,
    password: hasText(config.password) ? config.password : null,
    topicPrefix: config.topic_prefix ?? MQTT_DEFAULT_TOPIC_PREFIX,
    tlsCa: hasText(config.tls_ca) ? config.tls_ca : null,
    tlsRejectUnauthorized: config.tls_reject_unauthorized ?? true,
  };
  return connections.acquire(connection, context.signal, context.timeoutMs);
}

async function publishAll(connection: MqttConnection, publications: Publication[], context: SendContext): Promise<void> {
  await connections.publish(connection, publications, context.signal);
}

/** The watched network a new device belongs to: the one containing its address, else the scan's. */
function networkOf(ip: string | null, connection: MqttConnection, message: OutgoingMessage): string | null {
  if (ip && isIpv4Address(ip)) {
    for (const subnet of connection.knownSubnets) {
      const parsed = parseIpv4Network(subnet);
      if (parsed.ok && networkContains(parsed.value, ip)) return subnet;
    }
  }
  return message.scan?.scan_type === 'network' ? message.scan.subnet : null;
}

/** Keeps the subnets seen in publishState (all of them, however many were passed each time). */
function rememberSubnets(connection: MqttConnection, networks: NetworkState[]): void {
  const known = new Set(connection.knownSubnets);
  for (const network of networks) known.add(network.subnet);
  connection.knownSubnets = [...known].slice(-256);
}

function hasText(value: string | null | undefined): value is string {
  return typeof value === 'string' && value.length > 0;
}
