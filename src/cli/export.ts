/**
 * `netwarden export devices|changes`: the exports of GET /api/export/… (CONTRACT §11) written to
 * standard output, read straight from the configured datastore like the other datastore commands.
 * The filters are the API's, checked by the same schema; rows are streamed a page at a time.
 *
 * Exit status: 2 for bad usage (an unknown kind, format or filter value); 1 when the export could
 * not be made (an unknown scan, the database unreachable).
 */
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { HttpError } from '../api/errors.js';
import { EXPORT_FORMATS, EXPORT_KINDS, exportStream, type ExportFormat, type ExportKind, type ExportRequest } from '../api/export-stream.js';
import { changeFiltersOf, deviceFiltersOf, parseFilters } from '../api/list-filters.js';
import { CliError, action, printable, usageError, withStore } from './common.js';

interface ExportOptions {
  format: string;
  scanId?: string;
  riskLevel?: string;
  isTrusted?: string;
  zone?: string;
  subnet?: string;
  online?: string;
  q?: string;
  changeType?: string;
  severity?: string;
  deviceId?: string;
}

/** Each option, the query parameter it stands for, and the kinds it applies to. */
const FILTER_OPTIONS: { option: keyof ExportOptions; flag: string; param: string; kinds: ExportKind[] }[] = [
  { option: 'scanId', flag: '--scan-id', param: 'scan_id', kinds: ['devices', 'changes'] },
  { option: 'riskLevel', flag: '--risk-level', param: 'risk_level', kinds: ['devices'] },
  { option: 'isTrusted', flag: '--is-trusted', param: 'is_trusted', kinds: ['devices'] },
  { option: 'zone', flag: '--zone', param: 'zone', kinds: ['devices'] },
  { option: 'subnet', flag: '--subnet', param: 'subnet', kinds: ['devices'] },
  { option: 'online', flag: '--online', param: 'online', kinds: ['devices'] },
  { option: 'q', flag: '--q', param: 'q', kinds: ['devices'] },
  { option: 'changeType', flag: '--change-type', param: 'change_type', kinds: ['changes'] },
  { option: 'severity', flag: '--severity', param: 'severity', kinds: ['changes'] },
  { option: 'deviceId', flag: '--device-id', param: 'device_id', kinds: ['changes'] },
];

export function registerExportCommand(program: Command): void {
  program
    .command('export')
    .argument('<what>', `${EXPORT_KINDS.join(' or ')}`)
    .description('Write every device or change matching the filters to standard output as CSV or JSON (as GET /api/export/… does)')
    .option('--format <format>', `${EXPORT_FORMATS.join(' or ')}`, 'json')
    .option('--scan-id <id>', 'only devices seen by this scan / changes found by it')
    .option('--risk-level <level>', 'devices: critical, high, medium, low or none')
    .option('--is-trusted <bool>', 'devices: true or false')
    .option('--zone <zone>', 'devices: in this zone')
    .option('--subnet <cidr>', 'devices: whose address is in this IPv4 network, e.g. 192.168.1.0/24')
    .option('--online <bool>', 'devices: true (online) or false (offline)')
    .option('--q <text>', 'devices: free-text search (IP, MAC, hostname, vendor, label, notes, OS, type, zone, or an open port)')
    .option('--change-type <type>', 'changes: device_added, device_removed, port_opened, port_closed or service_changed')
    .option('--severity <severity>', 'changes: critical, high, medium, low or info')
    .option('--device-id <id>', 'changes: of this device')
    .addHelpText(
      'after',
      '\nExamples:\n  netwarden export devices --format csv > devices.csv\n  netwarden export changes --severity high --format json > changes.json',
    )
    .action(
      action(async (what: string, options: ExportOptions) => {
        if (!(EXPORT_KINDS as readonly string[]).includes(what)) {
          throw usageError(`export: what to export must be ${EXPORT_KINDS.join(' or ')}, not '${printable(what)}'`);
        }
        const kind = what as ExportKind;
        if (!(EXPORT_FORMATS as readonly string[]).includes(options.format)) {
          throw usageError(`--format must be ${EXPORT_FORMATS.join(' or ')}, not '${printable(options.format)}'`);
        }
        const given: Record<string, string> = {};
        for (const f of FILTER_OPTIONS) {
          const value = options[f.option];
          if (value === undefined) continue;
          if (!f.kinds.includes(kind)) throw usageError(`${f.flag} does not apply to ${kind}; it filters ${f.kinds.join(' and ')}`);
          given[f.param] = value;
        }
        const parsed = parseFilters(kind, given);
        if (!parsed.ok) {
          throw usageError(namingTheOption(parsed.error));
        }
        await withStore(async (store) => {
          let request: ExportRequest;
          try {
            request =
              kind === 'devices' ? { kind, filters: await deviceFiltersOf(store, parsed.value) } : { kind, filters: changeFiltersOf(parsed.value) };
          } catch (err) {
            // A value the schema let through but the filter refused (a subnet that is not a
            // CIDR network) is bad usage; an unknown scan is an export that cannot be made.
            if (err instanceof HttpError && err.statusCode === 400) throw usageError(namingTheOption(err.detail));
            if (err instanceof HttpError) throw new CliError(`--scan-id ${given.scan_id}: ${err.detail.toLowerCase()}`);
            throw err;
          }
          await writeOut(exportStream(store, request, options.format as ExportFormat));
        });
      }),
    );
}

/** The API's message names the query parameter (`risk_level: …`); name the option instead. */
function namingTheOption(message: string): string {
  const [param, ...rest] = message.split(': ');
  const flag = FILTER_OPTIONS.find((f) => f.param === param)?.flag ?? param;
  return `${flag}: ${rest.join(': ')}`;
}

/** Streams to standard output; a reader that stops early (`| head`) ends the export quietly. */
async function writeOut(stream: NodeJS.ReadableStream): Promise<void> {
  try {
    await pipeline(stream, process.stdout, { end: false });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EPIPE') return;
    throw err;
  }
}
