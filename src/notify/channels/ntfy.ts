/**
 * ntfy (https://ntfy.sh or self-hosted): `config.url` is the server and topic
 * (`https://ntfy.example.lan/netwarden`). Published as ntfy's JSON (POST to the server's root with
 * the topic in the body), so titles and device names in any script survive, which ntfy's header
 * form (latin-1 headers) would not. A token is sent as `Authorization: Bearer`.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { Severity } from '../../core/severity.js';
import { renderText, truncate } from '../compose.js';
import { isHttpUrl, post } from '../http.js';
import { secretKeysOf, type ChannelDriver } from '../types.js';

export const NtfyConfig = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      title: 'Server and topic',
      'x-input': 'url',
      description: 'Server and topic, e.g. https://ntfy.sh/my-netwarden; with `?auth=` the URL is itself a secret',
    }),
    token: Type.Optional(
      Type.Union([Type.String({ maxLength: 512 }), Type.Null()], {
        title: 'Access token',
        'x-secret': true,
        description: 'Access token (Bearer), for a protected topic',
      }),
    ),
    priority: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1, maximum: 5 }), Type.Null()], {
        title: 'Priority',
        description: 'ntfy priority 1–5; null: from the worst severity',
      }),
    ),
  },
  { additionalProperties: false, title: 'NtfyChannelConfig', description: 'type `ntfy`: a push to an ntfy topic' },
);
export type NtfyConfig = Static<typeof NtfyConfig>;

/** ntfy's message limit is 4,096 bytes; beyond that it turns the message into an attachment. */
const MESSAGE_CHARS = 3500;
const PRIORITY: Record<Severity, number> = { critical: 5, high: 4, medium: 3, low: 3, info: 2 };
const TAGS: Record<Severity, string[]> = {
  critical: ['rotating_light'],
  high: ['warning'],
  medium: ['warning'],
  low: ['information_source'],
  info: ['information_source'],
};

/** The server's root and the topic of a ntfy URL (`https://host/base/topic`). */
export function splitTopic(url: string): { server: string; topic: string } | null {
  try {
    const u = new URL(url);
    const parts = u.pathname.split('/').filter(Boolean);
    const topic = parts.pop();
    if (!topic) return null;
    u.pathname = `/${parts.join('/')}${parts.length ? '/' : ''}`;
    u.search = '';
    u.hash = '';
    return { server: u.toString(), topic: decodeURIComponent(topic) };
  } catch {
    return null;
  }
}

/** Whether a ntfy URL carries a token in its query (`?auth=…`). */
export function hasAuthParameter(url: string): boolean {
  try {
    return new URL(url).searchParams.has('auth');
  } catch {
    return false;
  }
}

export const ntfyDriver: ChannelDriver<NtfyConfig> = {
  type: 'ntfy',
  configSchema: NtfyConfig,
  secretKeys: secretKeysOf(NtfyConfig),
  destinationKeys: ['url'],
  // ntfy accepts an access token in the URL (`?auth=`): such a URL is a secret.
  secretUrl: (key, value) => key === 'url' && hasAuthParameter(value),
  check(config) {
    if (!isHttpUrl(config.url)) return 'config.url: must be an http:// or https:// URL of the server and topic, e.g. https://ntfy.sh/my-topic';
    if (!splitTopic(config.url)) return 'config.url: must end with the topic, e.g. https://ntfy.sh/my-topic';
    return null;
  },
  async send(config, message, context) {
    const { server: root, topic } = splitTopic(config.url)!;
    // A token given in the URL (`?auth=`) goes with the request, as ntfy reads it there.
    const auth = new URL(config.url).searchParams.get('auth');
    const server = auth === null ? root : `${root}?auth=${encodeURIComponent(auth)}`;
    const firstLink = message.groups.find((g) => g.url)?.url;
    const body = {
      topic,
      title: truncate(message.title, 250),
      message: renderText(message, { maxChars: MESSAGE_CHARS, links: true }),
      priority: config.priority ?? PRIORITY[message.severity],
      tags: TAGS[message.severity],
      ...(firstLink ? { click: firstLink } : {}),
    };
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (config.token) headers.Authorization = `Bearer ${config.token}`;
    await post({ url: server, headers, body: JSON.stringify(body) }, context);
  },
};
