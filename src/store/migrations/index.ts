import type { Kysely, Migration, MigrationProvider } from 'kysely';
import type { Dialect, MigrationContext } from './context.js';
export type { Dialect, MigrationContext } from './context.js';
import * as m001 from './001_initial.js';
import * as m002 from './002_coordination.js';
import * as m003 from './003_schedules.js';
import * as m004 from './004_notifications.js';
import * as m005 from './005_presence.js';
import * as m006 from './006_incremental_evaluation.js';
import * as m007 from './007_inventory_reads.js';
import * as m008 from './008_engine_groups.js';
import * as m009 from './009_device_search_index.js';
import * as m010 from './010_scale_out.js';
import * as m011 from './011_name_sources.js';
import * as m012 from './012_event_relay.js';
import * as m013 from './013_port_lists.js';
import * as m014 from './014_coverage.js';
import * as m015 from './015_identity.js';
import * as m017 from './017_risk.js';
import * as m016 from './016_device_status.js';
import * as m019 from './019_device_presence.js';
import * as m020 from './020_view_reads.js';
import * as m021 from './021_device_links.js';
import * as m022 from './022_port_sightings.js';
import * as m023 from './023_device_search_tokens.js';
import * as m024 from './024_finding_texts.js';
import * as m025 from './025_evidence_digest.js';
import * as m026 from './026_finding_indexes.js';
import * as m027 from './027_port_index.js';
import * as m028 from './028_view_zone_gateway_reads.js';
import * as m029 from './029_hot_updates.js';
import * as m031 from './031_bulk_references.js';
import * as m032 from './032_evidence_documents.js';

type MigrationModule = { up(db: Kysely<unknown>, ctx: MigrationContext): Promise<void> };

/** Versioned migrations, applied in key order. Never edit one that has shipped: add a new one. */
const modules: Record<string, MigrationModule> = {
  '001_initial': m001,
  '002_coordination': m002,
  '003_schedules': m003,
  '004_notifications': m004,
  '005_presence': m005,
  '006_incremental_evaluation': m006,
  '007_inventory_reads': m007,
  '008_engine_groups': m008,
  '009_device_search_index': m009,
  '010_scale_out': m010,
  '011_name_sources': m011,
  '012_event_relay': m012,
  '013_port_lists': m013,
  '014_coverage': m014,
  '015_identity': m015,
  '017_risk': m017,
  '016_device_status': m016,
  '019_device_presence': m019,
  '020_view_reads': m020,
  '021_device_links': m021,
  '022_port_sightings': m022,
  '023_device_search_tokens': m023,
  '024_finding_texts': m024,
  '025_evidence_digest': m025,
  '026_finding_indexes': m026,
  '027_port_index': m027,
  '028_view_zone_gateway_reads': m028,
  '029_hot_updates': m029,
  '031_bulk_references': m031,
  '032_evidence_documents': m032,
};

export function migrationProvider(dialect: Dialect): MigrationProvider {
  const ctx: MigrationContext = {
    dialect,
    idColumn: dialect === 'sqlite' ? (c) => c.primaryKey().autoIncrement() : (c) => c.primaryKey().generatedByDefaultAsIdentity(),
  };
  return {
    async getMigrations() {
      const out: Record<string, Migration> = {};
      for (const [name, mod] of Object.entries(modules)) {
        out[name] = { up: (db) => mod.up(db, ctx) };
      }
      return out;
    },
  };
}
