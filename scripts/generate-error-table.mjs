#!/usr/bin/env node
// Writes the table of error codes in README.md from their one description, ERROR_CODES in
// src/util/errors.ts (code, meaning) and STATUS_OF_CODE in src/api/errors.ts (HTTP status). The
// table sits between the two markers below; test/api/error-table.test.ts fails when it is stale.
//
//   node scripts/generate-error-table.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runnerImport } from 'vite';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const README = join(root, 'README.md');
export const TABLE_START = '<!-- error code table: generated from src/util/errors.ts by scripts/generate-error-table.mjs -->';
export const TABLE_END = '<!-- end of error code table -->';

/** `text` with the part between the markers replaced by `table`. */
export function withErrorTable(text, table) {
  const start = text.indexOf(TABLE_START);
  const end = text.indexOf(TABLE_END);
  if (start === -1 || end < start) throw new Error(`${README} has no ${TABLE_START} … ${TABLE_END} markers`);
  return `${text.slice(0, start + TABLE_START.length)}\n${table}${text.slice(end)}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { module } = await runnerImport(join(root, 'src', 'api', 'errors.ts'), { root, configFile: false, logLevel: 'error' });
  writeFileSync(README, withErrorTable(readFileSync(README, 'utf8'), module.errorCodeTable()));
}
