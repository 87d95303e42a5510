import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { DELIVERY_STATUSES } from '../../core/notify-rules.js';
import { SECRET_MASK } from '../../core/limits.js';
import { channelFromCreate, channelFromUpdate, showChannel } from '../../notify/channel-values.js';
import { Channel, ChannelCreate, ChannelUpdate, Delivery } from '../../schemas/notification.js';
import { nowIso } from '../../store/clock.js';
import { isObject } from '../../util/is-object.js';
import { audit } from '../audit.js';
import { badRequest, notFound } from '../errors.js';
import { Id, PAGED, StringEnum, errorResponses, pagingQuery } from '../schemas.js';

const tags = ['notifications'];
const ChannelParams = Type.Object({ channel_id: Id });

const CHANNEL_RULES =
  'Secrets in `config` (`secret`, `token`, `password`, a Slack or Discord webhook URL, an ntfy URL with `?auth=`) read back as ' +
  `\`${SECRET_MASK}\`. A URL with a user name or password in it is refused (400): credentials go in the type's own fields. ` +
  'Filters select the changes a channel hears about: `change_types` (null: all), `min_severity` (default low), `zones` (null: all), ' +
  '`untrusted_only` (default false), `scan_events` (default ["failed"]). After each scan a channel gets at most one message carrying ' +
  'all matching changes (`scan.changes`), or `scan.completed` / `scan.failed` when asked and nothing matched; with `digest` the ' +
  "changes are collected and sent as one `digest` message at the cron's times instead. Messages due inside `quiet_hours` are held " +
  'until they end, except those carrying a critical change. Invalid values give 400 naming the field.';

export const notificationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store, notifier } = app.services;

  const knownZones = async () => {
    const settings = await store.settings.get();
    return [...new Set([...settings.zones, ...(await store.devices.assignedZones())])];
  };
  const load = async (id: number) => {
    const channel = await store.notifications.getChannel(id);
    if (!channel) throw notFound('Channel');
    return channel;
  };

  app.get(
    '/api/notifications/channels',
    {
      schema: {
        tags,
        summary: 'List notification channels (secrets masked)',
        description: CHANNEL_RULES,
        response: { 200: Type.Array(Channel), ...errorResponses(401) },
      },
    },
    async () => (await store.notifications.listChannels()).map(showChannel),
  );

  app.post(
    '/api/notifications/channels',
    {
      schema: {
        tags,
        summary: 'Create a notification channel',
        description: `\`type\` is one of webhook, ntfy, gotify, discord, slack, email, mqtt; \`name\` is unique. ${CHANNEL_RULES}`,
        body: ChannelCreate,
        response: { 201: Channel, ...errorResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request, reply) => {
      const now = nowIso();
      const result = channelFromCreate(request.body, await knownZones(), now);
      if (!result.ok) throw badRequest(result.error);
      const channel = await store.notifications.createChannel(result.value, now);
      const shown = showChannel(channel);
      await audit(request, {
        action: 'channel_created',
        resourceType: 'notification_channel',
        resourceId: channel.id,
        success: true,
        details: {
          name: shown.name,
          type: shown.type,
          enabled: shown.enabled,
          config: shown.config,
          filters: shown.filters,
          digest: shown.digest,
          quiet_hours: shown.quiet_hours,
        },
      });
      return reply.code(201).send(shown);
    },
  );

  app.get(
    '/api/notifications/channels/:channel_id',
    {
      schema: {
        tags,
        summary: 'One notification channel (secrets masked)',
        params: ChannelParams,
        response: { 200: Channel, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => showChannel(await load(request.params.channel_id)),
  );

  app.put(
    '/api/notifications/channels/:channel_id',
    {
      schema: {
        tags,
        summary: 'Change part of a notification channel',
        description:
          'Partial and deep-merged: only the fields given change; inside `config`, `filters` and `quiet_hours` only the keys given change ' +
          '(`null` resets a config key to its default; `quiet_hours: null` or `digest: null` removes them). Sending a masked secret ' +
          `(\`${SECRET_MASK}\`) back keeps it; changing the destination (\`url\`, \`host\`), or turning email TLS off (\`secure\`, \`require_tls\` ` +
          'from true to false), without giving the secret again in the same request clears the secret (it reads back null). ' +
          '`type` cannot change.',
        params: ChannelParams,
        body: ChannelUpdate,
        response: { 200: Channel, ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
    },
    async (request) => {
      const current = await load(request.params.channel_id);
      const now = nowIso();
      const result = channelFromUpdate(current, request.body, await knownZones(), now);
      if (!result.ok) throw badRequest(result.error);
      const updated = await store.notifications.updateChannel(current.id, result.value.values, result.value.digestChanged);
      if (!updated) throw notFound('Channel');
      const before = showChannel(current);
      const after = showChannel(updated);
      const changes = diff(before, after);
      // A secret replaced by another reads the same masked: say which ones changed.
      for (const key of Object.keys(updated.config)) {
        const path = `config.${key}`;
        if (!changes[path] && after.config[key] === SECRET_MASK && updated.config[key] !== current.config[key]) {
          changes[path] = { old: SECRET_MASK, new: `${SECRET_MASK} (replaced)` };
        }
      }
      if (Object.keys(changes).length > 0) {
        await audit(request, {
          action: 'channel_updated',
          resourceType: 'notification_channel',
          resourceId: current.id,
          success: true,
          details: { name: after.name, changes },
        });
      }
      return after;
    },
  );

  app.delete(
    '/api/notifications/channels/:channel_id',
    {
      schema: {
        tags,
        summary: 'Delete a notification channel with its delivery log and held digest changes',
        params: ChannelParams,
        response: { 200: Type.Object({ status: Type.Literal('deleted'), id: Type.Integer() }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const current = await load(request.params.channel_id);
      if (!(await store.notifications.deleteChannel(current.id))) throw notFound('Channel');
      await audit(request, {
        action: 'channel_deleted',
        resourceType: 'notification_channel',
        resourceId: current.id,
        success: true,
        details: { name: current.name, type: current.type },
      });
      return { status: 'deleted' as const, id: current.id };
    },
  );

  app.post(
    '/api/notifications/channels/:channel_id/test',
    {
      schema: {
        tags,
        summary: 'Send a test message now and return its delivery record',
        description:
          'One attempt, sent at once (also when the channel is disabled or in quiet hours), with the usual 10 s timeout and no retries. ' +
          'The answer is 200 whether or not the destination accepted it: `status` is `sent` or `failed`, with `last_error` saying why ' +
          "in one short line (an error answer is read only up to 64 KiB; the channel's secrets are redacted). Loopback, link-local " +
          '(cloud metadata) and unspecified addresses are refused (`refused: …`) unless NETWARDEN_OUTBOUND_ALLOW allows them.',
        params: ChannelParams,
        response: { 200: Delivery, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const channel = await load(request.params.channel_id);
      const delivery = await notifier.sendTest(channel);
      if (!delivery) throw notFound('Channel');
      return delivery;
    },
  );

  app.get(
    '/api/notifications/deliveries',
    {
      schema: {
        tags,
        summary: 'The delivery log, newest first',
        description:
          'One record per message to one channel: `pending` (due, held by quiet hours, or waiting for a retry at `next_attempt_at`), ' +
          `\`sent\` or \`failed\` (after its last attempt; also audited as notification_failed), with attempts made and the last error. ${PAGED}`,
        querystring: Type.Object(
          { channel_id: Type.Optional(Id), status: Type.Optional(StringEnum(DELIVERY_STATUSES)), ...pagingQuery() },
          { additionalProperties: false },
        ),
        response: { 200: Type.Array(Delivery), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const { channel_id, status, limit = 100, offset = 0 } = request.query;
      if (channel_id !== undefined) await load(channel_id);
      const { rows, total } = await store.notifications.listDeliveries({ channelId: channel_id, status, limit, offset });
      reply.header('X-Total-Count', total);
      return rows;
    },
  );
};

/** `{ "config.url": { old, new } }` for every leaf that differs (both sides masked). */
function diff(before: unknown, after: unknown): Record<string, { old: unknown; new: unknown }> {
  const out: Record<string, { old: unknown; new: unknown }> = {};
  const walk = (a: unknown, b: unknown, path: string) => {
    if (isObject(a) && isObject(b)) {
      for (const key of new Set([...Object.keys(a), ...Object.keys(b)]))
        if (key !== 'updated_at') walk(a[key], b[key], path ? `${path}.${key}` : key);
    } else if (JSON.stringify(a) !== JSON.stringify(b)) {
      out[path] = { old: a, new: b };
    }
  };
  walk(before, after, '');
  return out;
}
