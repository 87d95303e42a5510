import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import { insertManyWith, insertMany } from './bulk.js';
import { IDS_PER_STATEMENT, chunks } from '../util/batches.js';

/** CISA KEV's facts about one CVE (CONTRACT §18 `kev`). */
export interface KevFact {
  date_added: string | null;
  ransomware: boolean;
  due_date: string | null;
}

/** FIRST EPSS's score of one CVE (CONTRACT §18 `epss`). */
export interface EpssFact {
  score: number;
  percentile: number;
  as_of: string;
}

export interface IntelSource {
  source: 'kev' | 'epss';
  imported_at: string;
  /** The catalogue's date (KEV: its release date; EPSS: the score date). */
  as_of: string | null;
  entries: number;
  detail: string | null;
}

const KEV_COLUMNS = { cve_id: 'text', date_added: 'text', due_date: 'text', ransomware: 'integer' } as const;
const EPSS_COLUMNS = { cve_id: 'text', score: 'real', percentile: 'real', as_of: 'text' } as const;

/**
 * Exploit intelligence in the database, so every instance sees the same (CONTRACT §18): the KEV
 * catalogue replaced whole by each import, EPSS scores upserted (a CVE missing from a newer file
 * keeps its score with its own date), and when each source was imported.
 */
export class IntelStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly onWrite: () => void,
  ) {}

  async replaceKev(entries: ReadonlyMap<string, KevFact>, source: Omit<IntelSource, 'source'>): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('intel_kev').execute();
      await insertMany(
        trx,
        'intel_kev',
        KEV_COLUMNS,
        [...entries].map(([cve_id, k]) => ({ cve_id, date_added: k.date_added, due_date: k.due_date, ransomware: k.ransomware ? 1 : 0 })),
      );
      await this.recordSource(trx, { source: 'kev', ...source });
    });
    this.onWrite();
  }

  async upsertEpss(entries: ReadonlyMap<string, EpssFact>, source: Omit<IntelSource, 'source'>): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await insertManyWith(
        trx,
        'intel_epss',
        EPSS_COLUMNS,
        [...entries].map(([cve_id, e]) => ({ cve_id, ...e })),
        'on conflict (cve_id) do update set score = excluded.score, percentile = excluded.percentile, as_of = excluded.as_of',
      );
      await this.recordSource(trx, { source: 'epss', ...source });
    });
    this.onWrite();
  }

  private async recordSource(trx: Kysely<Database>, s: IntelSource): Promise<void> {
    const { source, ...rest } = s;
    await trx
      .insertInto('intel_sources')
      .values(s)
      .onConflict((oc) => oc.column('source').doUpdateSet(rest))
      .execute();
  }

  async sources(): Promise<IntelSource[]> {
    const rows = await this.db.selectFrom('intel_sources').selectAll().orderBy('source').execute();
    return rows.map((r) => ({ ...r, source: r.source as 'kev' | 'epss' }));
  }

  /** KEV and EPSS facts of the given CVE ids (those known). */
  async factsOf(cveIds: readonly string[]): Promise<{ kev: Map<string, KevFact>; epss: Map<string, EpssFact> }> {
    const kev = new Map<string, KevFact>();
    const epss = new Map<string, EpssFact>();
    for (const ids of chunks([...new Set(cveIds)], IDS_PER_STATEMENT)) {
      const [k, e] = await Promise.all([
        this.db.selectFrom('intel_kev').selectAll().where('cve_id', 'in', ids).execute(),
        this.db.selectFrom('intel_epss').selectAll().where('cve_id', 'in', ids).execute(),
      ]);
      for (const r of k) kev.set(r.cve_id, { date_added: r.date_added, ransomware: r.ransomware === 1, due_date: r.due_date });
      for (const r of e) epss.set(r.cve_id, { score: r.score, percentile: r.percentile, as_of: r.as_of });
    }
    return { kev, epss };
  }
}
