/**
 * Slack incoming webhook: `text` (the notification and fallback) plus Block Kit blocks: a header,
 * the summary, one section per device (its name linked to its page) and, when not everything
 * fits, a context line "… and 940 more changes". Within Slack's limits: 50 blocks, a header's
 * text 150 characters, a section's 3,000.
 */
import { Type, type Static } from '@sinclair/typebox';
import { changeLine, fitLines, truncate } from '../compose.js';
import { isHttpUrl, post } from '../http.js';
import type { ChannelDriver, OutgoingMessage } from '../types.js';

export const SlackConfig = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      title: 'Webhook URL',
      'x-input': 'url',
      description: 'The incoming-webhook URL Slack gives; whoever has it can post, so it is a secret',
    }),
  },
  { additionalProperties: false, title: 'SlackChannelConfig', description: 'type `slack`: a message to a Slack incoming webhook' },
);
export type SlackConfig = Static<typeof SlackConfig>;

export const SLACK_LIMITS = { blocks: 50, header: 150, section: 3000, text: 3000, groupsText: 12_000 } as const;

/** Slack's mrkdwn needs &, < and > escaped; everything else is shown as written. */
export const escapeMrkdwn = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

type Block = Record<string, unknown>;

export function slackPayload(message: OutgoingMessage): { text: string; blocks: Block[] } {
  const blocks: Block[] = [
    { type: 'header', text: { type: 'plain_text', text: truncate(message.title, SLACK_LIMITS.header) } },
    { type: 'section', text: { type: 'mrkdwn', text: truncate(escapeMrkdwn(message.summary), SLACK_LIMITS.section) } },
  ];
  let budget: number = SLACK_LIMITS.groupsText;
  let shown = 0;
  let devices = 0;
  for (const group of message.groups) {
    // Room for the trailer block at the end.
    if (blocks.length >= SLACK_LIMITS.blocks - 1 || budget < 200) break;
    const name = escapeMrkdwn(group.name);
    const heading = group.url ? `*<${group.url}|${name}>*` : `*${name}*`;
    const room = Math.min(SLACK_LIMITS.section, budget);
    const text = fitLines(
      [heading],
      group.changes.map((c) => ({ text: `• ${escapeMrkdwn(changeLine(c))}`, change: true })),
      room,
    );
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text } });
    budget -= text.length;
    shown += group.changes.length;
    devices++;
  }
  const left = message.changes.length - shown;
  if (left > 0) {
    blocks.push({
      type: 'context',
      elements: [
        { type: 'mrkdwn', text: `… and ${left} more ${left === 1 ? 'change' : 'changes'} on ${message.groups.length - devices} more devices` },
      ],
    });
  }
  return { text: truncate(`${message.title}: ${message.summary}`, SLACK_LIMITS.text), blocks };
}

export const slackDriver: ChannelDriver<SlackConfig> = {
  type: 'slack',
  configSchema: SlackConfig,
  secretKeys: [],
  destinationKeys: ['url'],
  // Whoever has an incoming-webhook URL can post with it: the URL is the secret.
  secretUrl: (key) => key === 'url',
  check: (config) => (isHttpUrl(config.url) ? null : 'config.url: must be the http:// or https:// incoming-webhook URL Slack gives'),
  async send(config, message, context) {
    await post({ url: config.url, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(slackPayload(message)) }, context);
  },
};
