/**
 * A restore checks that JSON columns hold JSON (src/store/backup-content.ts). Its list of those
 * columns must be every `JsonText` column of src/store/schema.ts: a new JSON column added without
 * it would be restored unchecked.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JSON_COLUMNS } from '../../src/store/backup-content.js';
import { knownMigrations, migrationTables } from '../../src/store/backup-tables.js';

const schema = readFileSync(join(import.meta.dirname, '..', '..', 'src', 'store', 'schema.ts'), 'utf8');

/** `table.column` of every `JsonText` column of schema.ts, through its `Database` interface. */
function jsonTextColumns(): string[] {
  const tableOf = new Map<string, string>();
  // An interface's body ends at the `}` that starts a line (comments inside may hold braces).
  const database = /export interface Database \{\n([\s\S]*?)\n\}/.exec(schema)?.[1] ?? '';
  for (const [, table, type] of database.matchAll(/^\s*(\w+): (\w+);/gm)) tableOf.set(type, table);
  const found: string[] = [];
  for (const [, type, body] of schema.matchAll(/export interface (\w+) \{\n([\s\S]*?)\n\}/g)) {
    const table = tableOf.get(type);
    if (!table) continue;
    for (const [, column] of body.matchAll(/^\s*(\w+)\??: (?:Generated<)?JsonText\b/gm)) found.push(`${table}.${column}`);
  }
  return found.sort();
}

describe('the JSON columns a restore checks', () => {
  it('are every JsonText column of the schema, and exist in the migrations', async () => {
    const listed = Object.entries(JSON_COLUMNS)
      .flatMap(([table, columns]) => columns.map((c) => `${table}.${c}`))
      .sort();
    expect(listed.length).toBeGreaterThan(10);
    expect(listed).toEqual(jsonTextColumns());
    const tables = await migrationTables(await knownMigrations());
    for (const name of listed) {
      const [table, column] = name.split('.');
      expect(tables.find((t) => t.name === table)?.columns, name).toContain(column);
    }
  });
});
