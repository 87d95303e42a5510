/**
 * What a restore checks in each row before inserting it: a backup that was damaged or edited so
 * that a value no longer fits its column is refused, naming the line and the column, instead of
 * being stored (SQLite stores text in an INTEGER column without a word) and breaking the service
 * when it reads it back (a setting that is not JSON stops it from starting).
 *
 * - Declared types (from the migrations, backup-tables.ts): an integer column holds whole numbers
 *   (or a boolean, which the file may carry for a flag), a real column numbers, a text column text.
 * - NOT NULL columns hold a value.
 * - The columns whose text is a JSON document (store/schema.ts `JsonText`) hold valid JSON.
 */
import type { TableModel } from './backup-tables.js';

/**
 * The columns that hold JSON text, per table: every `JsonText` column of store/schema.ts
 * (test/store/backup-content.test.ts checks the two agree).
 */
export const JSON_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  audit_logs: ['details'],
  settings: ['value'],
  scans: ['progress', 'engine_pgids', 'warnings'],
  agents: ['networks'],
  devices: ['port_coverage', 'user_fields'],
  device_merges: ['merged_ids', 'snapshot'],
  device_snapshots: ['ports', 'port_coverage'],
  ports: ['cpe'],
  risk_findings: ['cve_ids'],
  notification_channels: ['config', 'filters', 'quiet_hours'],
  notification_deliveries: ['payload'],
  notification_held: ['change'],
};

/** Says what is wrong with one value as read from the file (before decoding), or null. */
type ValueCheck = (value: unknown) => string | null;

/**
 * The checks of a table's rows, in `header` column order: a function that returns what is wrong
 * with a row (`settings.value is not valid JSON`), or null.
 */
export function rowChecker(table: TableModel, columns: readonly string[]): (row: readonly unknown[]) => string | null {
  const json = new Set(JSON_COLUMNS[table.name] ?? []);
  const checks = columns.map((column) => {
    const i = table.columns.indexOf(column);
    return { name: `${table.name}.${column}`, check: valueCheck(table.types[i] ?? '', table.notNull[i] ?? false, json.has(column)) };
  });
  return (row) => {
    for (let i = 0; i < checks.length; i++) {
      const problem = checks[i].check(row[i]);
      if (problem) return `${checks[i].name} ${problem}`;
    }
    return null;
  };
}

function valueCheck(declared: string, notNull: boolean, json: boolean): ValueCheck {
  const kind = kindOf(declared);
  return (value) => {
    if (value === null) return notNull ? 'is null, but the column requires a value' : null;
    switch (kind) {
      case 'integer':
        if (typeof value === 'boolean' || (typeof value === 'number' && Number.isSafeInteger(value))) return null;
        return `must be a whole number, not ${describe(value)}`;
      case 'real':
        if (typeof value === 'number' || isTagged(value, 'float')) return null;
        return `must be a number, not ${describe(value)}`;
      case 'text':
        if (typeof value !== 'string') return `must be text, not ${describe(value)}`;
        if (json && !isJson(value)) return 'is not valid JSON';
        return null;
      case 'blob':
        return isTagged(value, 'base64') ? null : `must be bytes, not ${describe(value)}`;
      default:
        return null;
    }
  };
}

/** SQLite's type affinity rules, reduced to what the migrations declare. */
function kindOf(declared: string): 'integer' | 'real' | 'text' | 'blob' | 'any' {
  const type = declared.toUpperCase();
  if (type.includes('INT')) return 'integer';
  if (type.includes('CHAR') || type.includes('CLOB') || type.includes('TEXT')) return 'text';
  if (type.includes('BLOB')) return 'blob';
  if (type.includes('REAL') || type.includes('FLOA') || type.includes('DOUB')) return 'real';
  return 'any';
}

function isTagged(value: unknown, tag: string): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as Record<string, unknown>)[tag] === 'string';
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `the text ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'number') return `the number ${value}`;
  if (typeof value === 'boolean') return `${value}`;
  return 'an object';
}
