/**
 * Finding texts stored once (issue 24): a first import of 10,000 hosts wrote 260,000 finding rows,
 * each with its title, description and recommendation, though a few hundred distinct texts recur.
 * - `finding_texts`: each distinct (title, description, recommendation) once; `text_key` is a
 *   digest of the three (store/evaluation.ts textKey), unique, so a text is found without an index
 *   on the long columns.
 * - `risk_findings.text_id`: the finding's texts; its own title, description and recommendation
 *   are then empty. Null on rows written before this migration (and in backups taken before it),
 *   whose own columns still hold their texts: readers take the texts of `text_id` when set, else
 *   the row's own (store/evaluation.ts findingText).
 */
import type { Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, { idColumn }: MigrationContext): Promise<void> {
  await db.schema
    .createTable('finding_texts')
    .addColumn('id', 'integer', idColumn)
    .addColumn('text_key', 'text', (c) => c.notNull().unique())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('recommendation', 'text', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('risk_findings').addColumn('text_id', 'integer').execute();
}
