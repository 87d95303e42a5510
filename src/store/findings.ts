import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import { FINDING_TITLE } from './evaluation.js';
import { IDS_PER_STATEMENT, chunks } from '../util/batches.js';

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
  extra_info: string | null;
}

/** How a device's CVE was matched: the detection confidence the findings list shows. */
export interface InventoryCveMatch {
  device_id: number;
  cve_id: string;
  port: number | null;
  confidence: string;
  matched_product: string | null;
  matched_version: string | null;
  /** Non-null only when it differs from the dataset's: a distribution's back-port note. */
  remediation: string | null;
}

/** A finding as the device list's `risk_reason` reads it. */
export interface DeviceFindingRow {
  device_id: number;
  finding_key: string | null;
  kind: string | null;
  title: string;
  severity: string;
  cve_ids: string;
}

/** Every device's findings: the priority list orders them with exploit data the caller adds. */
export class FindingStore {
  constructor(private readonly db: Kysely<Database>) {}

  async all(): Promise<InventoryFinding[]> {
    return this.db
      .selectFrom('risk_findings as f')
      .innerJoin('devices as d', 'd.id', 'f.device_id')
      .leftJoin('finding_texts as t', 't.id', 'f.text_id')
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
        FINDING_TITLE,
        'f.cve_ids',
        'f.cvss_score',
        'p.product',
        'p.version',
        'p.extra_info',
      ])
      .orderBy('d.ip_sort')
      .orderBy('f.id')
      .execute();
  }

  /** Every device's CVE matches, for the confidence and fixed version of the CVE findings. */
  async cveMatches(): Promise<InventoryCveMatch[]> {
    return this.db
      .selectFrom('cve_matches')
      .select(['device_id', 'cve_id', 'port', 'confidence', 'matched_product', 'matched_version', 'remediation'])
      .execute();
  }

  /** The findings of the given devices (their keys, kinds, titles, severities and CVE ids), in id order. */
  async ofDevices(deviceIds: readonly number[]): Promise<DeviceFindingRow[]> {
    const out: DeviceFindingRow[] = [];
    for (const ids of chunks([...deviceIds], IDS_PER_STATEMENT)) {
      out.push(
        ...(await this.db
          .selectFrom('risk_findings as f')
          .leftJoin('finding_texts as t', 't.id', 'f.text_id')
          .select(['f.device_id', 'f.finding_key', 'f.kind', FINDING_TITLE, 'f.severity', 'f.cve_ids'])
          .where('f.device_id', 'in', ids)
          .orderBy('f.id')
          .execute()),
      );
    }
    return out;
  }
}
