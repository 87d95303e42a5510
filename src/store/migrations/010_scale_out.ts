/**
 * Scale-out (CONTRACT §7, §12): scans run as jobs on workers and agents, several at once.
 *
 * - `scans.target_low` / `target_high`: the scanned IPv4 range as unsigned integers, so that "does
 *   this target overlap a running or queued scan" is one indexed comparison
 *   (`scanning.max_parallel_scans` lets scans of non-overlapping targets run at once).
 * - `scans.agent_id`: the agent a scan was routed to (its target lies in the agent's networks);
 *   NULL for scans the server's own workers run.
 * - `scans.runner`: who runs (or ran) the scan, for the Scans page: `worker <name>` or `agent <name>`.
 * - `scans.job_id`: the queue's job for a queued scan (pg-boss's id on PostgreSQL).
 * - `scans.warnings`: JSON array of strings, problems that did not stop the scan.
 * - `scans.upload_started_at`: when an agent's results for the scan began to be recorded, so a
 *   retried upload (the connection dropped) is recorded once.
 * - `agents`: one row per agent; only the SHA-256 of its token is stored (as for API keys).
 *   `agent_networks`: its networks as IPv4 ranges, so a new scan is routed in the same statement
 *   that records it.
 * - `active_slot` (002) now takes the values 1..max_parallel_scans; its unique index still lets
 *   at most one scan hold each slot.
 */
import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, { idColumn }: MigrationContext): Promise<void> {
  await db.schema
    .createTable('agents')
    .addColumn('id', 'integer', idColumn)
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('networks', 'text', (c) => c.notNull())
    .addColumn('token_prefix', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text')
    .addColumn('version', 'text')
    .addColumn('hostname', 'text')
    .addColumn('engine', 'text')
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema
    .createTable('agent_networks')
    .addColumn('agent_id', 'integer', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('low', 'bigint', (c) => c.notNull())
    .addColumn('high', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('agent_networks_pk', ['agent_id', 'low', 'high'])
    .execute();
  await db.schema.createIndex('agent_networks_range').on('agent_networks').columns(['low', 'high']).execute();

  for (const [name, type] of [
    ['target_low', 'bigint'],
    ['target_high', 'bigint'],
    ['agent_id', 'integer'],
    ['runner', 'text'],
    ['job_id', 'text'],
    ['warnings', 'text'],
    ['upload_started_at', 'text'],
  ] as const) {
    await db.schema.alterTable('scans').addColumn(name, type).execute();
  }
  // Existing scans: their range from the subnet they name (a.b.c.d/n).
  const rows = await sql<{ id: number; subnet: string }>`select id, subnet from scans`.execute(db);
  for (const row of rows.rows) {
    const range = rangeOf(row.subnet);
    if (range) await sql`update scans set target_low = ${range[0]}, target_high = ${range[1]} where id = ${row.id}`.execute(db);
  }
  await db.schema.createIndex('scans_active_targets').on('scans').columns(['status', 'target_low', 'target_high']).execute();
  await db.schema.createIndex('scans_agent_queue').on('scans').columns(['agent_id', 'status', 'id']).execute();
}

/** A migration keeps its own copy of what it needs (a shipped migration never changes). */
function rangeOf(cidr: string): [number, number] | null {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)(?:\/(\d+))?$/.exec(cidr);
  if (!m) return null;
  const ip = ((+m[1] << 24) >>> 0) + (+m[2] << 16) + (+m[3] << 8) + +m[4];
  const bits = m[5] === undefined ? 32 : +m[5];
  const size = 2 ** (32 - bits);
  const low = ip - (ip % size);
  return [low, low + size - 1];
}
