/**
 * `netwarden devices list | search TEXT | show ID-OR-IP` (issue 23 §5): the inventory from the
 * datastore, without a server or a key, as GET /api/devices and GET /api/devices/{id} give it.
 * Only commander and the shared command helpers load with the program; the store opens when the
 * command runs (common.ts withStore), so `netwarden --help` stays fast.
 */
import type { Command } from 'commander';
import type { DeviceDetail, DeviceSummary } from '../schemas/device.js';
import type { Store } from '../store/index.js';
import { CliError, action, positiveInteger, printable, shortTime, table, usageError, withStore } from './common.js';

const STATUSES = ['new', 'known', 'archived', 'all'] as const;
const RISK_LEVELS = ['critical', 'high', 'medium', 'low', 'none'] as const;
/** Rows at most: the API's largest page. */
const MAX_LIMIT = 1000;

interface ListOptions {
  status?: string;
  risk?: string;
  zone?: string;
  limit: string;
  json?: boolean;
}

const nameOf = (d: DeviceSummary) => d.name || d.hostname || '';

function listText(rows: DeviceSummary[], total: number): string {
  if (rows.length === 0) return 'no devices\n';
  const body = table(
    ['ID', 'IP', 'NAME', 'TYPE', 'STATUS', 'RISK', 'PORTS', 'LAST SEEN'],
    rows.map((d) => [
      String(d.id),
      d.ip_address,
      printable(nameOf(d) || '-'),
      d.device_type ?? '-',
      `${d.status}${d.online ? '' : ', offline'}`,
      d.risk_level === 'none' ? '-' : `${d.risk_level} ${d.risk_score}`,
      d.open_ports.length === 0 ? '-' : d.open_ports.slice(0, 6).join(',') + (d.open_ports.length > 6 ? ',…' : ''),
      shortTime(d.last_seen),
    ]),
  );
  return total > rows.length ? `${body}(${rows.length} of ${total}; --limit shows more)\n` : body;
}

function showText(d: DeviceDetail): string {
  const yes = (b: boolean) => (b ? 'yes' : 'no');
  const lines: [string, string][] = [
    ['Device', `${d.id} ${nameOf(d) ? printable(nameOf(d)) : ''}`.trimEnd()],
    ['IP address', d.ip_address],
    ['MAC address', d.mac_address ?? '-'],
    ['Hostname', d.hostname ? printable(d.hostname) : '-'],
    ['Vendor / model', printable([d.vendor, d.model].filter(Boolean).join(' ')) || '-'],
    ['Type', d.device_type ?? '-'],
    ['OS', printable([d.os_name, d.os_version].filter(Boolean).join(' ')) || '-'],
    ['Zone', d.zone ? printable(d.zone) : '-'],
    ['Trusted', yes(d.is_trusted)],
    ['Status', d.status],
    [
      'Presence',
      `${d.online ? 'online' : 'offline'}${d.missed_scans > 0 ? `, missed ${d.missed_scans} scan(s)` : ''}` +
        (d.presence.offline_after_scans !== null ? `; can sleep: offline after ${d.presence.offline_after_scans} missed scans` : ''),
    ],
    ['Watch', [d.watch.offline ? 'offline' : null, d.watch.online ? 'online' : null].filter(Boolean).join(', ') || '-'],
    ['First / last seen', `${shortTime(d.first_seen)} / ${shortTime(d.last_seen)}`],
    ['Risk', `${d.risk_details.level} (score ${d.risk_details.score})`],
  ];
  const width = Math.max(...lines.map(([k]) => k.length));
  const out = lines.map(([k, v]) => `${k.padEnd(width)}  ${v}`);
  const open = d.ports.filter((p) => p.state === 'open');
  out.push('', open.length === 0 ? 'No open ports.' : 'Open ports:');
  for (const p of open) {
    const what = [p.service, p.product, p.version].filter(Boolean).join(' ');
    out.push(`  ${`${p.port}/${p.protocol}`.padEnd(10)} ${printable(what)}`.trimEnd());
  }
  const findings = d.risk_details.findings;
  out.push('', findings.length === 0 ? 'No findings.' : `Findings (${findings.length}):`);
  for (const f of findings) {
    const port = f.port === null ? '' : ` [${f.port}/${f.protocol ?? 'tcp'}]`;
    out.push(`  ${f.severity.padEnd(8)} ${printable(f.title)}${port}${f.acceptance ? ' (accepted)' : ''}`);
  }
  if (d.cves.length > 0) {
    const exploited = d.cves.filter((c) => c.kev).length;
    out.push('', `CVEs: ${d.cves.length}${exploited > 0 ? `, ${exploited} known exploited` : ''} (GET /api/devices/${d.id} lists them)`);
  }
  return `${out.join('\n')}\n`;
}

async function list(store: Store, options: ListOptions, search?: string): Promise<void> {
  if (options.status !== undefined && !(STATUSES as readonly string[]).includes(options.status)) {
    throw usageError(`--status must be one of ${STATUSES.join(', ')}, not '${printable(options.status)}'`);
  }
  if (options.risk !== undefined && !(RISK_LEVELS as readonly string[]).includes(options.risk)) {
    throw usageError(`--risk must be one of ${RISK_LEVELS.join(', ')}, not '${printable(options.risk)}'`);
  }
  const limit = positiveInteger(options.limit, '--limit', MAX_LIMIT);
  const status = options.status === 'all' || options.status === undefined ? undefined : (options.status as DeviceSummary['status']);
  const { rows, total } = await store.devices.list({
    search,
    status,
    // Like the web list: archived devices only when asked for (`--status archived` or `all`).
    excludeArchived: options.status === undefined,
    riskLevel: options.risk as DeviceSummary['risk_level'] | undefined,
    zone: options.zone,
    limit,
    offset: 0,
  });
  process.stdout.write(options.json ? `${JSON.stringify(rows, null, 2)}\n` : listText(rows, total));
}

/** A device by id, or by its current IP address (`show 192.168.1.20`). */
async function find(store: Store, which: string): Promise<DeviceDetail> {
  let id: number | undefined;
  if (/^\d+$/.test(which)) id = positiveInteger(which, 'device id', 2_147_483_647);
  else if (/^\d{1,3}(\.\d{1,3}){3}$/.test(which)) {
    const { rows } = await store.devices.list({ search: which, limit: MAX_LIMIT, offset: 0 });
    id = rows.find((d) => d.ip_address === which)?.id;
    if (id === undefined) throw new CliError(`no device has the address ${which}`);
  } else throw usageError(`give a device id or an IPv4 address, not '${printable(which)}'`);
  const device = await store.devices.get(id);
  if (!device) throw new CliError(`no device with id ${id}`);
  return device;
}

export function registerDevicesCommand(program: Command): void {
  const devices = program.command('devices').description('List, search and show the devices of the inventory (from the datastore)');
  const listOptions = (c: Command) =>
    c
      .option('--status <status>', `${STATUSES.join(', ')} (default: new and known; archived only when asked for)`)
      .option('--risk <level>', `only this risk level: ${RISK_LEVELS.join(', ')}`)
      .option('--zone <zone>', 'only devices in this zone')
      .option('--limit <n>', `at most this many rows (1–${MAX_LIMIT})`, '100')
      .option('--json', 'print the devices as the API does (GET /api/devices), as JSON');

  listOptions(devices.command('list').description('List devices, ordered by IP address')).action(
    action(async (options: ListOptions) => withStore((store) => list(store, options))),
  );

  listOptions(
    devices
      .command('search')
      .description('Devices whose address, MAC, name, vendor, notes, OS, type or zone contains TEXT, or with open port TEXT')
      .argument('<text>', 'what to look for'),
  ).action(
    action(async (text: string, options: ListOptions) => {
      if (text.trim() === '') throw usageError('search: give some text to look for');
      await withStore((store) => list(store, options, text.trim()));
    }),
  );

  devices
    .command('show')
    .description('One device: facts, status, presence, open ports, findings and CVE count')
    .argument('<device>', 'its id or its IPv4 address')
    .option('--json', 'print the device as GET /api/devices/{id} does, as JSON')
    .action(
      action(async (which: string, options: { json?: boolean }) =>
        withStore(async (store) => {
          const device = await find(store, which);
          process.stdout.write(options.json ? `${JSON.stringify(device, null, 2)}\n` : showText(device));
        }),
      ),
    );
}
