/** A port as the `ports` table stores it, and as everything above the store sees it: the one conversion each way. */
import { createHash } from 'node:crypto';
import type { ScannedPort } from '../core/model.js';
import type { Kysely } from 'kysely';
import type { Database, PortRow } from './schema.js';
import { IDS_PER_STATEMENT, chunks } from '../util/batches.js';

/** Open port rows over the inventory: GET /api/stats and GET /metrics count the same. */
export async function openPortCount(db: Kysely<Database>, options: { excludeArchived?: boolean } = {}): Promise<number> {
  let query = db
    .selectFrom('ports')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('state', '=', 'open');
  if (options.excludeArchived) {
    query = query.where('device_id', 'not in', (eb) => eb.selectFrom('devices').select('id').where('status', '=', 'archived'));
  }
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A stored port as a scan result (CPEs parsed, the protocol narrowed). */
export function portFromRow(
  row: Pick<PortRow, 'port' | 'protocol' | 'state' | 'service' | 'product' | 'version' | 'extra_info' | 'cpe'> & { service_guessed?: number },
): ScannedPort {
  return {
    port: row.port,
    protocol: row.protocol === 'udp' ? 'udp' : 'tcp',
    state: row.state,
    service: row.service,
    product: row.product,
    version: row.version,
    extra_info: row.extra_info,
    cpe: JSON.parse(row.cpe) as string[],
    ...(row.service_guessed ? { service_guessed: true } : {}),
  };
}

/** The stored columns of a scanned port (without its device and sighting times). */
export function portColumns(port: ScannedPort) {
  return {
    port: port.port,
    protocol: port.protocol,
    state: port.state,
    service: port.service,
    product: port.product,
    version: port.version,
    extra_info: port.extra_info,
    cpe: JSON.stringify(port.cpe),
    service_guessed: port.service_guessed ? 1 : 0,
  };
}

/** The stored columns of a port, as read back (the protocol as any text). */
export type PortColumns = Omit<ReturnType<typeof portColumns>, 'protocol'> & { protocol: string };

/**
 * A hash of a device's ports as stored (every stored column but the sighting times), in a fixed
 * order: equal hashes, equal ports. `devices.ports_hash` holds it, so a scan that finds the same
 * ports need not read them back.
 */
export function portsHash(ports: readonly PortColumns[]): string {
  const sorted = [...ports].sort((a, b) => a.port - b.port || a.protocol.localeCompare(b.protocol));
  // service_guessed joins the tuple only when set: ports hashed before it existed keep their hash.
  const text = JSON.stringify(
    sorted.map((p) => [p.port, p.protocol, p.state, p.service, p.product, p.version, p.extra_info, p.cpe, ...(p.service_guessed ? [1] : [])]),
  );
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}

/**
 * Gives the port rows `portIds` marked verified_with_device (migration 022) their device's last
 * port recording as their own verification, unmarked: before they move to another device (a merge
 * or a fold), whose recording is not theirs.
 */
export async function settlePortVerification(db: Kysely<Database>, portIds: readonly number[]): Promise<void> {
  for (const part of chunks(portIds, IDS_PER_STATEMENT)) {
    await db
      .updateTable('ports')
      .set((eb) => ({
        last_verified_at: eb.selectFrom('devices').select('devices.ports_verified_at').whereRef('devices.id', '=', 'ports.device_id'),
        verified_by_scan_id: eb.selectFrom('devices').select('devices.ports_verified_by').whereRef('devices.id', '=', 'ports.device_id'),
        verified_with_device: 0,
      }))
      .where('id', 'in', part)
      .where('verified_with_device', '=', 1)
      .execute();
  }
}
