/**
 * Gotify: `POST {url}/message` with the application token in `X-Gotify-Key` and
 * `{title, message, priority}` (plus the click-through link to the first device page).
 */
import { Type, type Static } from '@sinclair/typebox';
import type { Severity } from '../../core/severity.js';
import { renderText, truncate } from '../compose.js';
import { isHttpUrl, post } from '../http.js';
import { DeliveryError, secretKeysOf, type ChannelDriver } from '../types.js';

export const GotifyConfig = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      title: 'Server URL',
      'x-input': 'url',
      description: 'The Gotify server, e.g. https://gotify.example.lan',
    }),
    token: Type.Union([Type.String({ maxLength: 512 }), Type.Null()], {
      title: 'Application token',
      'x-secret': true,
      description: 'Application token',
    }),
  },
  { additionalProperties: false, title: 'GotifyChannelConfig', description: 'type `gotify`: a message to a Gotify application' },
);
export type GotifyConfig = Static<typeof GotifyConfig>;

const PRIORITY: Record<Severity, number> = { critical: 10, high: 8, medium: 5, low: 3, info: 1 };
const MESSAGE_CHARS = 8000;

export const gotifyDriver: ChannelDriver<GotifyConfig> = {
  type: 'gotify',
  configSchema: GotifyConfig,
  secretKeys: secretKeysOf(GotifyConfig),
  destinationKeys: ['url'],
  check(config) {
    if (!isHttpUrl(config.url)) return 'config.url: must be an http:// or https:// URL of the Gotify server';
    return null;
  },
  async send(config, message, context) {
    // A token cleared by a change of url (and not given again) leaves nothing to authenticate with.
    if (!config.token) throw new DeliveryError('no application token configured (config.token)', false);
    const firstLink = message.groups.find((g) => g.url)?.url;
    const body = {
      title: truncate(message.title, 250),
      message: renderText(message, { maxChars: MESSAGE_CHARS, links: true }),
      priority: PRIORITY[message.severity],
      extras: {
        'client::display': { contentType: 'text/plain' },
        ...(firstLink ? { 'client::notification': { click: { url: firstLink } } } : {}),
      },
    };
    await post(
      {
        url: `${config.url.replace(/\/+$/, '')}/message`,
        headers: { 'Content-Type': 'application/json', 'X-Gotify-Key': config.token },
        body: JSON.stringify(body),
      },
      context,
    );
  },
};
