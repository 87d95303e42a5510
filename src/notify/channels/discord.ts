/**
 * Discord incoming webhook: the summary as `content` and one embed per device (its name linked
 * to its page, its changes as the description), within Discord's limits: content 2,000
 * characters, 10 embeds, an embed title 256 and description 4,096, all embeds together 6,000.
 * Mentions are disabled, so a device label can never ping anyone.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { Severity } from '../../core/severity.js';
import { changeLine, fitLines, truncate } from '../compose.js';
import { isHttpUrl, post } from '../http.js';
import type { ChannelDriver, OutgoingMessage } from '../types.js';

export const DiscordConfig = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      title: 'Webhook URL',
      'x-input': 'url',
      description: "The channel's incoming-webhook URL; whoever has it can post, so it is a secret",
    }),
  },
  { additionalProperties: false, title: 'DiscordChannelConfig', description: 'type `discord`: a message to a Discord channel webhook' },
);
export type DiscordConfig = Static<typeof DiscordConfig>;

export const DISCORD_LIMITS = { content: 2000, embeds: 10, title: 256, description: 4096, total: 6000 } as const;
const COLOUR: Record<Severity, number> = { critical: 0x991b1b, high: 0xdc2626, medium: 0xf59e0b, low: 0x2563eb, info: 0x6b7280 };

interface Embed {
  title: string;
  url?: string;
  description: string;
  color: number;
}

export function discordPayload(message: OutgoingMessage): {
  username: string;
  content: string;
  embeds: Embed[];
  allowed_mentions: { parse: never[] };
} {
  const embeds: Embed[] = [];
  let budget: number = DISCORD_LIMITS.total;
  let shown = 0;
  for (const group of message.groups) {
    if (embeds.length === DISCORD_LIMITS.embeds) break;
    const title = truncate(group.name, DISCORD_LIMITS.title);
    // Keep room in the budget for later devices: a single device may not take everything.
    const room = Math.min(DISCORD_LIMITS.description, budget - title.length);
    if (room < 80) break;
    const description = fitLines(
      [],
      group.changes.map((c) => ({ text: `• ${changeLine(c)}`, change: true })),
      room,
    );
    const worst = group.changes[0]?.severity ?? 'info';
    embeds.push({ title, ...(group.url ? { url: group.url } : {}), description, color: COLOUR[worst] });
    budget -= title.length + description.length;
    // A cut description counts its own left-out changes; count what the embeds show in full.
    shown += group.changes.length;
  }
  const left = message.changes.length - shown;
  const trailer =
    left > 0 ? `\n… and ${left} more ${left === 1 ? 'change' : 'changes'} on ${message.groups.length - embeds.length} more devices` : '';
  const content = truncate(`**${message.title}**\n${message.summary}`, DISCORD_LIMITS.content - trailer.length) + trailer;
  return { username: 'Netwarden', content, embeds, allowed_mentions: { parse: [] } };
}

export const discordDriver: ChannelDriver<DiscordConfig> = {
  type: 'discord',
  configSchema: DiscordConfig,
  secretKeys: [],
  destinationKeys: ['url'],
  // Whoever has an incoming-webhook URL can post with it: the URL is the secret.
  secretUrl: (key) => key === 'url',
  check: (config) => (isHttpUrl(config.url) ? null : 'config.url: must be the http:// or https:// incoming-webhook URL Discord gives'),
  async send(config, message, context) {
    await post({ url: config.url, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(discordPayload(message)) }, context);
  },
};
