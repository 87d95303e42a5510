import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** One stored finding with its device, as the cross-inventory list (GET /api/findings) reads it. */
export interface InventoryFinding {
  device_id: number;
  device_ip: string;
  device_label: string | null;
  device_hostname: string | null;
  finding_key: string | null;
  kind: string | null;
  port: number | null;
  protocol: string | null;
  severity: string;
  title: string;
  cve_ids: string;
  cvss_score: number | null;
  product: string | null;
  version: string | null;
}

/** Every device's findings: the priority list orders them with exploit data the caller adds. */
export class FindingStore {
  constructor(private readonly db: Kysely<Database>) {}

  async all(): Promise<InventoryFinding[]> {
    return this.db
      .selectFrom('risk_findings as f')
      .innerJoin('devices as d', 'd.id', 'f.device_id')
      .leftJoin('ports as p', (j) => j.onRef('p.device_id', '=', 'f.device_id').onRef('p.port', '=', 'f.port').onRef('p.protocol', '=', 'f.protocol'))
      .select([
        'f.device_id',
        'd.ip_address as device_ip',
        'd.label as device_label',
        'd.hostname as device_hostname',
        'f.finding_key',
        'f.kind',
        'f.port',
        'f.protocol',
        'f.severity',
        'f.title',
        'f.cve_ids',
        'f.cvss_score',
        'p.product',
        'p.version',
      ])
      .orderBy('d.ip_sort')
      .orderBy('f.id')
      .execute();
  }
}
