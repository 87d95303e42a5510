/**
 * Generic webhook (CONTRACT §9): a JSON POST of `{event, sent_at, scan, changes, summary}` to
 * `config.url`, signed with `X-Netwarden-Signature: sha256=<hex HMAC-SHA256 of the raw body>` when
 * `config.secret` is set. The receiver verifies the signature over the bytes it received.
 */
import { createHmac } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { isHttpUrl, post } from '../http.js';
import { secretKeysOf, type ChannelDriver, type OutgoingMessage } from '../types.js';

export const WebhookConfig = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, title: 'URL', 'x-input': 'url', description: 'http:// or https:// URL the JSON is POSTed to' }),
    secret: Type.Optional(
      Type.Union([Type.String({ maxLength: 512 }), Type.Null()], {
        title: 'Signing secret',
        'x-secret': true,
        description: 'Optional HMAC-SHA256 key: signs each body, `X-Netwarden-Signature: sha256=<HMAC>`',
      }),
    ),
  },
  { additionalProperties: false, title: 'WebhookChannelConfig', description: 'type `webhook`: a JSON POST to `url`, signed when `secret` is set' },
);
export type WebhookConfig = Static<typeof WebhookConfig>;

/** The webhook body, exactly as CONTRACT §9 defines it. */
export function webhookBody(message: OutgoingMessage): string {
  return JSON.stringify({
    event: message.event,
    sent_at: message.sentAt,
    scan: message.scan,
    changes: message.changes,
    summary: message.summary,
    ...(message.device ? { device: message.device } : {}),
  });
}

export function signature(secret: string, rawBody: string): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody, 'utf8').digest('hex')}`;
}

export const webhookDriver: ChannelDriver<WebhookConfig> = {
  type: 'webhook',
  configSchema: WebhookConfig,
  secretKeys: secretKeysOf(WebhookConfig),
  destinationKeys: ['url'],
  check: (config) => (isHttpUrl(config.url) ? null : 'config.url: must be an http:// or https:// URL'),
  async send(config, message, context) {
    const body = webhookBody(message);
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'X-Netwarden-Event': message.event,
      'X-Netwarden-Delivery': String(message.deliveryId),
    };
    if (config.secret) headers['X-Netwarden-Signature'] = signature(config.secret, body);
    await post({ url: config.url, headers, body }, context);
  },
};
