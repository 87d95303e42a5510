/**
 * What the MQTT channel publishes, and where: the topics under `topic_prefix`, the JSON payloads,
 * and the Home Assistant discovery documents under `discovery_prefix`. Pure (no I/O): the driver
 * (mqtt.ts) publishes what these functions return.
 *
 * Topics (`netwarden` = topic_prefix, `<id>` = the network's topic-safe id, `192_168_1_0_24`):
 *   netwarden/status                  online | offline (retained; the connection's last will)
 *   netwarden/events                  every notification as JSON (QoS 1, not retained)
 *   netwarden/<id>/state              the network's state as JSON (retained)
 *   netwarden/<id>/new_device         one JSON event per new device (QoS 1, not retained)
 *   homeassistant/<component>/netwarden_<id>_<entity>/config   discovery (retained)
 */
import type { Change } from '../../schemas/change.js';
import type { NetworkState, OutgoingMessage } from '../types.js';

export interface Publication {
  topic: string;
  payload: string;
  retain: boolean;
}

/** What a topic prefix may not contain: wildcards, NUL, empty levels, a leading `$` (broker-reserved). */
export function topicPrefixProblem(prefix: string): string | null {
  if (prefix.length === 0) return 'must not be empty';
  if (prefix.length > 200) return 'must be at most 200 characters';
  if (/[+#]/.test(prefix)) return 'must not contain the MQTT wildcards + or #';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(prefix)) return 'must not contain NUL or other control characters';
  if (prefix.startsWith('/') || prefix.endsWith('/')) return 'must not start or end with /';
  if (prefix.includes('//')) return 'must not contain an empty level (//)';
  if (prefix.startsWith('$')) return 'must not start with $ (topics reserved by the broker)';
  return null;
}

/** A network's id in topics, unique_ids and entity ids: `192.168.1.0/24` → `192_168_1_0_24`. */
export function networkId(subnet: string): string {
  return subnet
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

export const statusTopic = (prefix: string) => `${prefix}/status`;
export const eventsTopic = (prefix: string) => `${prefix}/events`;
export const stateTopic = (prefix: string, id: string) => `${prefix}/${id}/state`;
export const newDeviceTopic = (prefix: string, id: string) => `${prefix}/${id}/new_device`;

/** The `<prefix>/events` payload: the webhook's body (CONTRACT §9) plus what a subscriber filters on. */
export function eventPayload(message: OutgoingMessage): string {
  return JSON.stringify({
    event: message.event,
    delivery_id: message.deliveryId,
    sent_at: message.sentAt,
    title: message.title,
    summary: message.summary,
    severity: message.severity,
    scan: message.scan,
    changes: message.changes,
    ...(message.device ? { device: message.device } : {}),
  });
}

/** The retained state of one network, which every Home Assistant entity of it reads. */
export function statePayload(network: NetworkState, now: Date): string {
  const scan = network.last_scan;
  return JSON.stringify({
    subnet: network.subnet,
    devices_online: network.devices_online,
    devices_at_risk: network.devices_at_risk,
    scan_running: network.scan_running,
    last_scan_at: scan ? (scan.completed_at ?? scan.started_at) : null,
    last_scan: scan
      ? {
          scan_id: scan.scan_id,
          status: scan.status,
          profile: scan.profile,
          started_at: scan.started_at,
          completed_at: scan.completed_at,
          devices_found: scan.devices_found,
          triggered_by: scan.triggered_by,
        }
      : null,
    updated_at: now.toISOString(),
  });
}

/**
 * The payload of Home Assistant's `event` entity for one new device: `event_type` is what the
 * entity requires (one of its `event_types`); the rest become the event's attributes.
 */
export function newDevicePayload(change: Change, message: OutgoingMessage): string {
  const group = message.groups.find((g) => g.changes.some((c) => c.id === change.id));
  return JSON.stringify({
    event_type: 'device_added',
    device_id: change.device_id,
    ip: change.device_ip,
    mac: change.device_mac,
    name: group?.name ?? change.device_ip,
    url: group?.url ?? null,
    severity: change.severity,
    description: change.description,
    scan_id: change.scan_id,
    detected_at: change.detected_at,
  });
}

export interface DiscoveryOptions {
  discoveryPrefix: string;
  topicPrefix: string;
  version: string;
}

/**
 * Home Assistant MQTT discovery for one network: one HA device ("Netwarden 192.168.1.0/24")
 * with five entities, all reading the one retained state topic and all unavailable while
 * `<prefix>/status` says offline.
 *
 * `object_id` sets the entity id on Home Assistant before 2025.10; from 2025.10 `default_entity_id`
 * does (object_id is deprecated there and ignored later): both are sent, which older and newer
 * versions accept (discovery drops keys a version does not know).
 */
export function discoveryPublications(options: DiscoveryOptions, network: NetworkState): Publication[] {
  const id = networkId(network.subnet);
  const state = stateTopic(options.topicPrefix, id);
  const device = {
    identifiers: [`netwarden_${id}`],
    name: `Netwarden ${network.subnet}`,
    manufacturer: 'Netwarden',
    model: 'Network scanner',
    sw_version: options.version,
  };
  const origin = { name: 'Netwarden', sw_version: options.version };
  const entity = (component: string, key: string, fields: Record<string, unknown>): Publication => {
    const objectId = `netwarden_${id}_${key}`;
    return {
      topic: `${options.discoveryPrefix}/${component}/${objectId}/config`,
      retain: true,
      payload: JSON.stringify({
        unique_id: objectId,
        object_id: objectId,
        default_entity_id: `${component}.${objectId}`,
        ...fields,
        availability_topic: statusTopic(options.topicPrefix),
        payload_available: 'online',
        payload_not_available: 'offline',
        qos: 1,
        device,
        origin,
      }),
    };
  };
  return [
    entity('sensor', 'devices_online', {
      name: 'Devices online',
      state_topic: state,
      value_template: '{{ value_json.devices_online }}',
      unit_of_measurement: 'devices',
      state_class: 'measurement',
      icon: 'mdi:lan-connect',
    }),
    entity('sensor', 'devices_at_risk', {
      name: 'Devices at risk',
      state_topic: state,
      value_template: '{{ value_json.devices_at_risk }}',
      unit_of_measurement: 'devices',
      state_class: 'measurement',
      icon: 'mdi:shield-alert',
    }),
    entity('sensor', 'last_scan', {
      name: 'Last scan',
      state_topic: state,
      // A JSON null renders as "None", which an MQTT sensor takes as "no value" (unknown).
      value_template: '{{ value_json.last_scan_at }}',
      device_class: 'timestamp',
      json_attributes_topic: state,
      json_attributes_template: '{{ (value_json.last_scan or {}) | to_json }}',
      icon: 'mdi:radar',
    }),
    entity('binary_sensor', 'scan_running', {
      name: 'Scan running',
      state_topic: state,
      value_template: "{{ 'ON' if value_json.scan_running else 'OFF' }}",
      payload_on: 'ON',
      payload_off: 'OFF',
      device_class: 'running',
    }),
    // HA's `event` entity (2023.8+): an automation triggers on each new device, with its
    // address, MAC and name as attributes. Not retained: a restart must not replay old events.
    entity('event', 'new_device', {
      name: 'New device',
      state_topic: newDeviceTopic(options.topicPrefix, id),
      event_types: ['device_added'],
      icon: 'mdi:lan-pending',
    }),
  ];
}
