import type { Kysely } from 'kysely';
import { AGENT_OFFLINE_AFTER_SECONDS } from '../core/limits.js';
import type { AgentRecord } from '../schemas/agent.js';
import { nowIso } from './clock.js';
import type { AgentsTable, Database } from './schema.js';
import { targetRange } from './scans.js';
import type { Selectable } from 'kysely';

export type AgentRow = Selectable<AgentsTable>;

/** The record `GET /api/agents` shows (CONTRACT §12); `now` decides online or offline. */
export function toAgentRecord(row: AgentRow, now = Date.now()): AgentRecord {
  const seen = row.last_seen_at ? Date.parse(row.last_seen_at) : NaN;
  return {
    id: row.id,
    name: row.name,
    networks: JSON.parse(row.networks) as string[],
    status: !Number.isNaN(seen) && now - seen <= AGENT_OFFLINE_AFTER_SECONDS * 1000 ? 'online' : 'offline',
    last_seen_at: row.last_seen_at,
    version: row.version,
    hostname: row.hostname,
    engine: row.engine,
    token_prefix: row.token_prefix,
    created_at: row.created_at,
  };
}

/** Agents and the networks they scan; only the SHA-256 of a token is stored. */
export class AgentStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly onWrite: () => void,
  ) {}

  /** Records an agent and its networks (canonical CIDRs). Throws a unique violation on a taken name. */
  async create(agent: { name: string; networks: string[]; tokenPrefix: string; tokenHash: string; createdBy: string | null }): Promise<AgentRow> {
    const row = await this.db.transaction().execute(async (trx) => {
      const created = await trx
        .insertInto('agents')
        .values({
          name: agent.name,
          networks: JSON.stringify(agent.networks),
          token_prefix: agent.tokenPrefix,
          token_hash: agent.tokenHash,
          created_by: agent.createdBy,
          created_at: nowIso(),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      const ranges = agent.networks.map((cidr) => targetRange(cidr)!);
      // Two networks may reduce to one range (10.0.0.0/24 given twice): the key is (agent, low, high).
      const unique = [...new Map(ranges.map((r) => [`${r.low}-${r.high}`, r])).values()];
      await trx
        .insertInto('agent_networks')
        .values(unique.map((r) => ({ agent_id: created.id, low: r.low, high: r.high })))
        .execute();
      return created;
    });
    this.onWrite();
    return row;
  }

  /** Agents not revoked, oldest first. */
  list(): Promise<AgentRow[]> {
    return this.db.selectFrom('agents').selectAll().where('revoked_at', 'is', null).orderBy('id').execute();
  }

  get(id: number): Promise<AgentRow | undefined> {
    return this.db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The agent a token belongs to, if it is not revoked. */
  byTokenHash(hash: string): Promise<AgentRow | undefined> {
    return this.db.selectFrom('agents').selectAll().where('token_hash', '=', hash).where('revoked_at', 'is', null).executeTakeFirst();
  }

  /** Records that the agent was heard from, with what it says of itself. */
  async touch(id: number, about: { version?: string | null; hostname?: string | null; engine?: string | null } = {}): Promise<void> {
    await this.db
      .updateTable('agents')
      .set({
        last_seen_at: nowIso(),
        ...(about.version !== undefined ? { version: about.version } : {}),
        ...(about.hostname !== undefined ? { hostname: about.hostname } : {}),
        ...(about.engine !== undefined ? { engine: about.engine } : {}),
      })
      .where('id', '=', id)
      .execute();
  }

  /**
   * Revokes an agent: its token stops working and new scans are no longer routed to it (its
   * networks go). False when it was already revoked.
   */
  async revoke(id: number): Promise<boolean> {
    const revoked = await this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('agents')
        .set({ revoked_at: nowIso() })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      await trx.deleteFrom('agent_networks').where('agent_id', '=', id).execute();
      return Number(result.numUpdatedRows) === 1;
    });
    this.onWrite();
    return revoked;
  }
}
