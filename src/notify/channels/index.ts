/** Every channel type's driver, by type (CONTRACT §9). A new type is one module added here. */
import type { ChannelDriver, ChannelType } from '../types.js';
import { discordDriver } from './discord.js';
import { emailDriver } from './email.js';
import { gotifyDriver } from './gotify.js';
import { mqttDriver } from './mqtt.js';
import { ntfyDriver } from './ntfy.js';
import { slackDriver } from './slack.js';
import { webhookDriver } from './webhook.js';

export type DriverRegistry = Readonly<Record<ChannelType, ChannelDriver<object>>>;

export const DRIVERS: DriverRegistry = {
  webhook: webhookDriver,
  ntfy: ntfyDriver,
  gotify: gotifyDriver,
  discord: discordDriver,
  slack: slackDriver,
  email: emailDriver,
  mqtt: mqttDriver,
};
