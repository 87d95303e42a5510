/**
 * MQTT (mqtt.js), with Home Assistant discovery. PLACEHOLDER: the config schema of CONTRACT §13
 * with its defaults, so channels can be created and validated; publishing is built on the
 * notify-mq branch, which replaces this file wholesale.
 */
import { Type, type Static } from '@sinclair/typebox';
import { DeliveryError, type ChannelDriver } from '../types.js';

export const MqttConfig = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'mqtt:// or mqtts:// broker URL' }),
    username: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
    password: Type.Optional(Type.Union([Type.String({ maxLength: 512 }), Type.Null()])),
    topic_prefix: Type.String({ minLength: 1, maxLength: 200, default: 'netwarden' }),
    ha_discovery: Type.Boolean({ default: true, description: 'Publish Home Assistant MQTT discovery' }),
    discovery_prefix: Type.String({ minLength: 1, maxLength: 200, default: 'homeassistant' }),
  },
  { additionalProperties: false },
);
export type MqttConfig = Static<typeof MqttConfig>;

function isMqttUrl(text: string): boolean {
  try {
    return ['mqtt:', 'mqtts:'].includes(new URL(text).protocol);
  } catch {
    return false;
  }
}

export const mqttDriver: ChannelDriver<MqttConfig> = {
  type: 'mqtt',
  configSchema: MqttConfig,
  secretKeys: ['password'],
  destinationKeys: ['url'],
  check(config) {
    if (!isMqttUrl(config.url)) return 'config.url: must be an mqtt:// or mqtts:// URL';
    for (const key of ['topic_prefix', 'discovery_prefix'] as const) {
      if (/[+#]/.test(config[key])) return `config.${key}: must not contain the MQTT wildcards + or #`;
    }
    return null;
  },
  send() {
    return Promise.reject(new DeliveryError('not built yet', false));
  },
};
