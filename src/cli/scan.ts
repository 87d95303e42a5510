import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import { SCAN_PROFILES } from '../core/model.js';
import { InvalidInputError, RefusedError } from '../util/errors.js';
import type { ScanProfile } from '../core/model.js';
import { CLI_ACTOR, CliError, action, printable, usageError, withServices } from './common.js';

export function registerScanCommand(program: Command): void {
  program
    .command('scan')
    .description('Run a scan now, through the same engine as the service, and print a summary')
    .option('--profile <profile>', `${SCAN_PROFILES.join(', ')} (default: scanning.default_profile)`)
    .option('--subnet <cidr>', 'IPv4 CIDR or one address (default: the configured network.subnet)')
    .option('--no-progress', 'no progress bar (for logs and cron)')
    .action(
      action(async (options: { profile?: string; subnet?: string; progress: boolean }) => {
        if (options.profile !== undefined && !(SCAN_PROFILES as readonly string[]).includes(options.profile)) {
          throw usageError(`--profile must be one of ${SCAN_PROFILES.join(', ')}`);
        }
        await withServices(async ({ store, scans: manager }) => {
          let scan;
          try {
            scan = await manager.trigger({
              profile: options.profile as ScanProfile | undefined,
              subnet: options.subnet,
              actor: { name: CLI_ACTOR.actor, type: CLI_ACTOR.actorType },
            });
          } catch (err) {
            if (err instanceof RefusedError) throw new CliError(err.message, err instanceof InvalidInputError ? 2 : 1);
            throw err;
          }
          const interrupt = () => {
            process.stderr.write('\ncancelling the scan…\n');
            manager.cancel(scan.id).catch((err) => process.stderr.write(`could not cancel the scan: ${String((err as Error).message)}\n`));
          };
          process.once('SIGINT', interrupt);
          const bar =
            options.progress && process.stderr.isTTY
              ? new cliProgress.SingleBar(
                  {
                    stream: process.stderr,
                    format: ' {bar} {percentage}% | {phase} | hosts {found} found, {done} done | ETA {eta_text}',
                    hideCursor: true,
                  },
                  cliProgress.Presets.shades_classic,
                )
              : null;
          bar?.start(100, 0, { phase: 'starting', found: 0, done: 0, eta_text: '?' });
          const timer = setInterval(() => {
            const current = manager.current();
            if (!current || !bar) return;
            const p = current.progress;
            bar.update(Math.floor(p.percent), {
              phase: p.phase,
              found: p.hosts_found,
              done: p.hosts_done,
              eta_text: p.eta_seconds === null ? '?' : `${Math.round(p.eta_seconds)}s`,
            });
          }, 250);
          await manager.waitFor(scan.id);
          clearInterval(timer);
          process.removeListener('SIGINT', interrupt);
          bar?.update(100, { phase: 'done' });
          bar?.stop();

          const finished = await store.scans.get(scan.id);
          if (!finished || finished.status !== 'completed') {
            throw new CliError(`scan ${scan.id} ${finished?.status ?? 'vanished'}: ${finished?.error ?? 'no details'}`);
          }
          const devices = await store.devices.scanDevices(scan.id);
          const changes = await store.changes.list({ scanId: scan.id, limit: 1000, offset: 0 });
          const rows = devices.map((d) => [
            d.ip_address,
            d.mac_address ?? '',
            printable(d.vendor ?? ''),
            printable(d.hostname ?? ''),
            d.open_ports.join(',') || '-',
            `${d.risk_level} (${d.risk_score})`,
          ]);
          console.log(table(['IP', 'MAC', 'VENDOR', 'HOSTNAME', 'OPEN PORTS', 'RISK'], rows));
          console.log(
            `\nscan ${scan.id}: ${finished.profile} scan of ${finished.subnet} found ${finished.devices_found} device(s) in ${finished.duration_seconds?.toFixed(1)} s; ${changes.total} change(s) since the previous scan`,
          );
          for (const c of changes.rows.slice(0, 20)) console.log(`  [${c.severity}] ${printable(c.description)}`);
        });
      }),
    );
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
