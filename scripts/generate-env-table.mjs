#!/usr/bin/env node
// Writes the table of environment variables in docs/configuration.md from their one description,
// ENVIRONMENT in src/config/environment.ts (name, config file key, default, meaning). The table
// sits between the two markers below; test/config/environment.test.ts fails when it is stale.
//
//   node scripts/generate-env-table.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runnerImport } from 'vite';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CONFIGURATION_DOC = join(root, 'docs', 'configuration.md');
export const TABLE_START = '<!-- environment table: generated from src/config/environment.ts by scripts/generate-env-table.mjs -->';
export const TABLE_END = '<!-- end of environment table -->';

/** `text` with the part between the markers replaced by `table`. */
export function withEnvironmentTable(text, table) {
  const start = text.indexOf(TABLE_START);
  const end = text.indexOf(TABLE_END);
  if (start === -1 || end < start) throw new Error(`${CONFIGURATION_DOC} has no ${TABLE_START} … ${TABLE_END} markers`);
  return `${text.slice(0, start + TABLE_START.length)}\n${table}${text.slice(end)}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { module } = await runnerImport(join(root, 'src', 'config', 'environment.ts'), { root, configFile: false, logLevel: 'error' });
  writeFileSync(CONFIGURATION_DOC, withEnvironmentTable(readFileSync(CONFIGURATION_DOC, 'utf8'), module.environmentTable()));
}
