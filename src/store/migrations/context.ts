/** Kept apart from the list of migrations, so that no migration imports it back. */
import type { ColumnDefinitionBuilder } from 'kysely';

export type Dialect = 'sqlite' | 'postgres';

/** What a migration needs to know about the database it runs on. */
export interface MigrationContext {
  dialect: Dialect;
  /** Column definition for an auto-generated integer primary key in this dialect. */
  idColumn: (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder;
}
