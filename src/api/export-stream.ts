/**
 * Exports of the device inventory and the changes (CONTRACT §11, §13) as text streamed a page at a
 * time: GET /api/export/… sends them and `netwarden export` writes them to standard output. Rows
 * are read from the store in keyset pages of EXPORT_PAGE_SIZE and each page is encoded and handed
 * on before the next is read, so memory stays flat whatever the number of rows.
 */
import { Readable } from 'node:stream';
import { csvRows } from '../core/csv.js';
import { EXPORT_PAGE_SIZE } from '../core/limits.js';
import type { Change } from '../schemas/change.js';
import type { DeviceSummary } from '../schemas/device.js';
import type { ChangeFilters } from '../store/changes.js';
import type { DeviceFilters } from '../store/devices.js';
import type { Store } from '../store/index.js';

export const EXPORT_FORMATS = ['csv', 'json'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export const EXPORT_KINDS = ['devices', 'changes'] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];

/**
 * Devices CSV columns: the device summary fields in CONTRACT §4's order, then the summary fields
 * added since (`mac_randomized`, `missed_scans`, `ports_examined`, `ports_examined_at`, `stale_ports`, then `name`, `type_confidence`, `model`, `os_version` of §15, then `status`; `watch` and `presence`, objects, are in the JSON export only). `open_ports` is written as numbers joined by spaces.
 */
export const DEVICE_CSV_COLUMNS = [
  'id',
  'ip_address',
  'mac_address',
  'hostname',
  'vendor',
  'device_type',
  'os_name',
  'label',
  'zone',
  'is_trusted',
  'notes',
  'risk_level',
  'risk_score',
  'open_ports',
  'first_seen',
  'last_seen',
  'last_scan_id',
  'online',
  'mac_randomized',
  'missed_scans',
  'ports_examined',
  'ports_examined_at',
  'stale_ports',
  'name',
  'type_confidence',
  'model',
  'os_version',
  'status',
] as const satisfies readonly (keyof DeviceSummary)[];

/** Changes CSV columns: the change fields of CONTRACT §5, in its order. */
export const CHANGE_CSV_COLUMNS = [
  'id',
  'scan_id',
  'change_type',
  'severity',
  'device_id',
  'device_ip',
  'device_mac',
  'port',
  'protocol',
  'old_value',
  'new_value',
  'description',
  'detected_at',
] as const satisfies readonly (keyof Change)[];

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

export type ExportRequest = { kind: 'devices'; filters: DeviceFilters } | { kind: 'changes'; filters: ChangeFilters };

/** `netwarden-devices-20261122T024808Z.csv`: what the export is and when it was taken. */
export function exportFileName(kind: ExportKind, format: ExportFormat, now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/[-:]/g, '');
  return `netwarden-${kind}-${stamp}.${format}`;
}

/**
 * The export as text chunks, one per page of rows: CSV (RFC 4180, CRLF, header row, formulas
 * defused) or one JSON array. Devices come in IP address order, changes newest first.
 */
export async function* exportChunks(store: Store, request: ExportRequest, format: ExportFormat): AsyncGenerator<string> {
  const pages: AsyncIterable<object[]> =
    request.kind === 'devices' ? store.devices.iterate(request.filters, EXPORT_PAGE_SIZE) : store.changes.iterate(request.filters, EXPORT_PAGE_SIZE);
  const columns: readonly string[] = request.kind === 'devices' ? DEVICE_CSV_COLUMNS : CHANGE_CSV_COLUMNS;
  if (format === 'csv') {
    let header = true;
    for await (const rows of pages) {
      yield csvRows(columns as never, rows, header);
      header = false;
    }
    if (header) yield csvRows(columns as never, [], true);
    return;
  }
  let first = true;
  for await (const rows of pages) {
    if (rows.length === 0) continue;
    const body = rows.map((row) => JSON.stringify(row)).join(',\n');
    yield first ? `[\n${body}` : `,\n${body}`;
    first = false;
  }
  yield first ? '[]\n' : '\n]\n';
}

/** The export as a byte stream that reads the next page only when the previous one was taken (back-pressure). */
export function exportStream(store: Store, request: ExportRequest, format: ExportFormat): Readable {
  return Readable.from(exportChunks(store, request, format), { objectMode: false });
}
