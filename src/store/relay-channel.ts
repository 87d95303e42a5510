/**
 * The database side of the event relay (events/relay.ts): a PostgreSQL notification channel that
 * every process on the same database and schema listens to, so a message sent by one reaches all
 * the others.
 *
 * - The channel is named after the schema (`netwarden:<schema>`), so deployments or test runs in
 *   other schemas of the same database never hear each other.
 * - Messages are sent through the pool (a commit delivers them, in commit order), each tagged with
 *   its sender, so a receiver can drop its own.
 * - A notification carries under 8000 bytes: a longer message is stored in `relay_messages`
 *   (migration 012) and only its id is sent; receivers read it from there. Stored messages are
 *   deleted after STORED_MESSAGE_TTL_MS.
 * - Listening takes a connection of its own (outside the pool) for as long as it listens.
 *
 * SQLite has no such channel: `available` is false there.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type pg from 'pg';
import type { DatabaseHandle } from './db.js';

/** Longest message sent inline, in bytes of UTF-8 (PostgreSQL refuses a payload of 8000 bytes or more; the envelope needs a few). */
export const INLINE_LIMIT_BYTES = 7800;
/** How long a stored (long) message is kept for the receivers to read. */
export const STORED_MESSAGE_TTL_MS = 60_000;
/** PostgreSQL truncates identifiers (channel names among them) to 63 bytes. */
const MAX_CHANNEL_BYTES = 63;

/** What arrived on the channel: the sender's id, and the message itself or the id it is stored under. */
export type RelayNotice = { sender: string; body: string } | { sender: string; storedId: number };

export interface RelayListener {
  /** Ends the listening connection. */
  close(): Promise<void>;
}

export interface ListenHandlers {
  onNotice(notice: RelayNotice): void;
  /** The connection failed or ended (not after close()): listen again to resume. */
  onLost(err: Error): void;
}

export class RelayChannel {
  private channelName: Promise<string> | undefined;

  constructor(private readonly handle: DatabaseHandle) {}

  /** True on PostgreSQL; SQLite has no channel (and needs none). */
  get available(): boolean {
    return this.handle.dialect === 'postgres' && this.handle.dedicatedClient !== undefined;
  }

  /** The channel of this database schema. */
  channel(): Promise<string> {
    this.channelName ??= sql<{ schema: string | null }>`select current_schema() as schema`
      .execute(this.handle.db)
      .then(({ rows }) => channelFor(rows[0]?.schema ?? ''))
      .catch((err: unknown) => {
        this.channelName = undefined;
        throw err;
      });
    return this.channelName;
  }

  /** Sends `body` to every listener of the channel (this process's included: receivers drop their own by `sender`). */
  async send(sender: string, body: string): Promise<void> {
    const channel = await this.channel();
    let payload = `${sender}|b|${body}`;
    if (Buffer.byteLength(payload, 'utf8') > INLINE_LIMIT_BYTES) {
      const row = await this.handle.db
        .insertInto('relay_messages')
        .values({ created_at: new Date().toISOString(), body })
        .returning('id')
        .executeTakeFirstOrThrow();
      payload = `${sender}|s|${row.id}`;
    }
    await sql`select pg_notify(${channel}, ${payload})`.execute(this.handle.db);
  }

  /** A stored message's body (undefined once deleted). */
  async stored(id: number): Promise<string | undefined> {
    const row = await this.handle.db.selectFrom('relay_messages').select('body').where('id', '=', id).executeTakeFirst();
    return row?.body;
  }

  /** Deletes stored messages older than STORED_MESSAGE_TTL_MS. */
  async prune(now = Date.now()): Promise<void> {
    const before = new Date(now - STORED_MESSAGE_TTL_MS).toISOString();
    await this.handle.db.deleteFrom('relay_messages').where('created_at', '<', before).execute();
  }

  /** Opens a connection of its own and listens to the channel; rejects when it cannot connect. */
  async listen(handlers: ListenHandlers): Promise<RelayListener> {
    const create = this.handle.dedicatedClient;
    if (!create) throw new Error('the event relay needs PostgreSQL');
    const channel = await this.channel();
    const client: pg.Client = create();
    let closed = false;
    let lost = false;
    const lose = (err: Error) => {
      if (closed || lost) return;
      lost = true;
      client.end().catch(() => {});
      handlers.onLost(err);
    };
    client.on('error', lose);
    client.on('end', () => lose(new Error('the connection ended')));
    client.on('notification', (message) => {
      if (closed || message.channel !== channel || message.payload === undefined) return;
      const notice = parseNotice(message.payload);
      if (notice) handlers.onNotice(notice);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${quoteChannel(channel)}`);
    } catch (err) {
      closed = true;
      await client.end().catch(() => {});
      throw err;
    }
    return {
      async close() {
        if (closed) return;
        closed = true;
        await client.end().catch(() => {});
      },
    };
  }
}

/** The channel of a schema: its name, or a digest of it when the name would be too long. */
export function channelFor(schema: string): string {
  const plain = `netwarden:${schema}`;
  if (Buffer.byteLength(plain, 'utf8') <= MAX_CHANNEL_BYTES) return plain;
  return `netwarden:${createHash('sha256').update(schema).digest('hex').slice(0, 40)}`;
}

function quoteChannel(channel: string): string {
  return `"${channel.replaceAll('"', '""')}"`;
}

function parseNotice(payload: string): RelayNotice | undefined {
  const first = payload.indexOf('|');
  if (first <= 0 || payload[first + 2] !== '|') return undefined;
  const sender = payload.slice(0, first);
  const kind = payload[first + 1];
  const rest = payload.slice(first + 3);
  if (kind === 'b') return { sender, body: rest };
  if (kind === 's' && /^\d+$/.test(rest)) return { sender, storedId: Number(rest) };
  return undefined;
}
