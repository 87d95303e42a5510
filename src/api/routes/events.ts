/**
 * `GET /api/events` (CONTRACT §10): the process's live events (events/bus.ts; on PostgreSQL also
 * those of the other processes on the database, brought by events/relay.ts) as Server-Sent Events. Each event is written as `id:`, `event:` and `data:` (JSON) lines; a client that
 * reconnects with `Last-Event-ID` (or `?last_event_id=`) first gets what it missed from the last
 * EVENT_REPLAY_LIMIT events. A comment line every `keepAliveMs` keeps proxies from closing an idle
 * stream, and at each one the credentials are checked again, so a revoked key or an ended session
 * stops receiving events within that interval. Streams end when the server closes.
 */
import { PassThrough } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { EVENT_DATA_MAX_BYTES, EVENT_NAMES, EVENT_REPLAY_LIMIT, EVENT_REPLAY_MAX_BYTES, type NetwardenEvent } from '../../events/bus.js';
import { LiveEvent } from '../../schemas/event.js';
import { badRequest } from '../errors.js';
import { errorResponses } from '../schemas.js';

export interface EventRoutesOptions {
  /** How often a comment line is sent on an otherwise quiet stream (default 15 s; tests shorten it). */
  keepAliveMs?: number;
}

export const EVENT_KEEP_ALIVE_MS = 15_000;

/**
 * Bytes a stream may hold unsent before the client counts as stuck: its stream is ended (it
 * reconnects with Last-Event-ID and is replayed what it missed) rather than buffered without bound.
 * A whole replay (the kept events' data plus their id and name lines) always fits.
 */
const MAX_UNSENT_BYTES = Math.max(4 * 1024 * 1024, EVENT_REPLAY_MAX_BYTES + 1024 * 1024);

const DESCRIPTION = [
  'Server-Sent Events of this server process: ' + EVENT_NAMES.map((n) => `\`${n}\``).join(', ') + ' (schemas under the 200 response).',
  '',
  'A completed scan publishes, in this order: `scan_started`, `scan_progress` (at most twice a second), then each `change` it detected',
  'and a `device_updated` for each device it changed, then `scan_finished`.',
  '',
  `**Resuming.** Every event has an increasing \`id\`. A client that reconnects sends the last id it received as the \`Last-Event-ID\` header`,
  `(browsers' EventSource does this by itself) and first gets the events it missed, from the last ${EVENT_REPLAY_LIMIT} this process kept`,
  `(fewer when they hold more than ${EVENT_REPLAY_MAX_BYTES / 1024 / 1024} MiB of data).`,
  'Clients that cannot set headers pass `?last_event_id=` instead; when both are given the header wins (an EventSource reconnecting to a URL with',
  'the parameter sends the newer id in the header). Without either, the stream starts with the next event. Ids restart when the server restarts.',
  '',
  `**Size.** One event's \`data\` is at most ${EVENT_DATA_MAX_BYTES / 1024} KiB of JSON. Larger data (a device whose hostname is megabytes long) is trimmed:`,
  'the longest texts are cut and end in `…`, then, if need be, the longest lists keep only their first items. Read the resource for the whole value.',
  '',
  `**Keep-alive.** A comment line (\`: keep-alive\`) is sent every ${EVENT_KEEP_ALIVE_MS / 1000} s. At each one the credentials are checked`,
  'again: the stream of a revoked or expired key or an ended session is closed (reconnecting then answers 401).',
  '',
  'The response is not compressed or cached (`Cache-Control: no-cache, no-transform`, `X-Accel-Buffering: no` for nginx); a proxy in front',
  'must not buffer it. With several instances on one PostgreSQL database, every instance streams the events of all of them (the scans any',
  'of them runs, the edits any of them serves), numbered by the instance the client is connected to; ids of different instances are unrelated.',
].join('\n');

export const eventRoutes: FastifyPluginAsyncTypebox<EventRoutesOptions> = async (app, options) => {
  const { events, authenticator } = app.services;
  const keepAliveMs = options.keepAliveMs ?? EVENT_KEEP_ALIVE_MS;
  /** Open streams, ended when the server closes (they would otherwise hold app.close() open). */
  const open = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
  });

  app.get(
    '/api/events',
    {
      // A HEAD request would open a stream nobody reads.
      exposeHeadRoute: false,
      schema: {
        tags: ['events'],
        summary: 'Live events (Server-Sent Events): scans, their progress and changes, device updates',
        description: DESCRIPTION,
        querystring: Type.Object(
          {
            last_event_id: Type.Optional(
              Type.Integer({
                minimum: 0,
                maximum: Number.MAX_SAFE_INTEGER,
                description:
                  'Replay the kept events after this id first; for clients that cannot send the Last-Event-ID header (which wins when both are given)',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        headers: Type.Object({
          'last-event-id': Type.Optional(
            Type.String({ description: 'The id of the last event received: the kept events after it are replayed first' }),
          ),
        }),
        response: {
          200: {
            description: 'The event stream (`text/event-stream`), open until the client or the server closes it',
            content: { 'text/event-stream': { schema: LiveEvent } },
          },
          ...errorResponses(400, 401),
        },
      },
    },
    async (request, reply) => {
      const lastId = resumeFrom(request.headers['last-event-id'], request.query.last_event_id);
      const stream = new PassThrough();
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        clearInterval(keepAlive);
        unsubscribe();
        open.delete(end);
        stream.end();
      };
      const write = (text: string) => {
        if (ended) return;
        if (stream.writableLength > MAX_UNSENT_BYTES) {
          request.log.warn({ unsent_bytes: stream.writableLength }, 'event stream client is not reading; closing its stream');
          end();
          return;
        }
        stream.write(text);
      };
      const send = (event: NetwardenEvent) => write(`id: ${event.id}\nevent: ${event.name}\ndata: ${JSON.stringify(event.data)}\n\n`);

      // Replay and subscription in one synchronous step: no event can fall between them.
      const missed = lastId === null ? [] : events.since(lastId);
      const unsubscribe = events.subscribe(send);
      const keepAlive = setInterval(() => {
        write(': keep-alive\n\n');
        authenticator.authenticate(request).then(
          (principal) => {
            if (!principal) end();
          },
          () => end(),
        );
      }, keepAliveMs);
      keepAlive.unref();
      open.add(end);
      // The client went away (or the connection broke): stop listening.
      reply.raw.once('close', end);
      stream.once('error', end);

      write(': netwarden events\n\n');
      for (const event of missed) send(event);

      return (
        reply
          .header('Content-Type', 'text/event-stream; charset=utf-8')
          .header('Cache-Control', 'no-cache, no-transform')
          .header('X-Accel-Buffering', 'no')
          // The connection closes with the stream: nothing lingers idle after the server ends it.
          .header('Connection', 'close')
          // A stream is sent as is: the schema above only documents the events it carries.
          .send(stream as never)
      );
    },
  );
};

/** The id to replay after: the Last-Event-ID header when given, else the query parameter; null for none. */
function resumeFrom(header: string | string[] | undefined, query: number | undefined): number | null {
  const text = Array.isArray(header) ? header[header.length - 1] : header;
  if (text !== undefined && text.trim() !== '') {
    const trimmed = text.trim();
    if (!/^\d{1,15}$/.test(trimmed)) throw badRequest('Last-Event-ID: must be the id of an event received earlier (a whole number)');
    return Number(trimmed);
  }
  return query ?? null;
}
