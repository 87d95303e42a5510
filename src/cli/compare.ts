import type { Command } from 'commander';
import { describeSummary, formatCompareText } from '../core/compare.js';
import type { Comparison } from '../schemas/compare.js';
import { InvalidInputError, NetwardenError } from '../util/errors.js';
import { CliError, action, positiveInteger, printable, usageError, withStore } from './common.js';

const FORMATS = ['summary', 'text', 'json'] as const;

/** The summary: one line of counts, then one line per device that differs (as the Compare page groups them). */
function summaryText(c: Comparison): string {
  const lines = [
    `scan ${c.current.scan_id} (${c.current.subnet}) compared with scan ${c.previous.scan_id} (${c.previous.subnet}): ${describeSummary(c.summary)}`,
  ];
  for (const d of c.devices) {
    const where = d.status === 'moved' ? `${d.ip_before} -> ${d.ip_after}` : (d.ip_after ?? d.ip_before ?? '?');
    const details = [
      ...d.ports_opened.map((p) => `+${p.port}/${p.protocol}`),
      ...d.ports_closed.map((p) => `-${p.port}/${p.protocol}`),
      ...d.services_changed.map((s) => `${s.port}/${s.protocol}: ${s.before} -> ${s.after}`),
    ];
    if (d.risk_before && d.risk_after && (d.risk_before.level !== d.risk_after.level || d.risk_before.score !== d.risk_after.score)) {
      details.push(`risk ${d.risk_before.level} (${d.risk_before.score}) -> ${d.risk_after.level} (${d.risk_after.score})`);
    }
    lines.push(`  ${d.status.padEnd(9)} ${where}${d.name ? ` ${d.name}` : ''}${details.length ? `: ${details.join(', ')}` : ''}`.trimEnd());
  }
  return `${lines.map(printable).join('\n')}\n`;
}

export function registerCompareCommand(program: Command): void {
  program
    .command('compare')
    .description('Compare two completed scans by device identity (added, removed, moved, changed), as GET /api/scans/{current}/compare/{previous}')
    .argument('<current>', 'the later scan id')
    .argument('<previous>', 'the earlier scan id')
    .option('--format <format>', `${FORMATS.join(', ')}: summary (default), text in the manner of nmap's ndiff, or the API's JSON`, 'summary')
    .option('--all', 'also list the devices both scans saw alike')
    .action(
      action(async (currentArg: string, previousArg: string, options: { format: string; all?: boolean }) => {
        if (!(FORMATS as readonly string[]).includes(options.format)) {
          throw usageError(`--format must be one of ${FORMATS.join(', ')}, not '${printable(options.format)}'`);
        }
        const current = positiveInteger(currentArg, 'current scan id', 2_147_483_647);
        const previous = positiveInteger(previousArg, 'previous scan id', 2_147_483_647);
        await withStore(async (store) => {
          let comparison: Comparison;
          try {
            comparison = await store.history.compare(current, previous, { includeUnchanged: options.all === true });
          } catch (err) {
            if (err instanceof NetwardenError) throw new CliError(err.message, err instanceof InvalidInputError ? 2 : 1);
            throw err;
          }
          if (options.format === 'json') process.stdout.write(`${JSON.stringify(comparison, null, 2)}\n`);
          else if (options.format === 'text') process.stdout.write(formatCompareText(comparison).split('\n').map(printable).join('\n'));
          else process.stdout.write(summaryText(comparison));
        });
      }),
    );
}
