import { readFileSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import { NMAP_REPORT_MAX_BYTES } from '../core/limits.js';
import { readNmapReport } from '../scan/report-reader.js';
import { toScanRecord } from '../store/scans.js';
import { InvalidInputError, RefusedError } from '../util/errors.js';
import { CLI_ACTOR, CliError, action, messageOf, printable, usageError, withServices } from './common.js';

/** Reads the report: a file, or standard input for `-`; refused beyond the API's limit (50 MiB). */
async function readReport(path: string): Promise<string> {
  if (path === '-') {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > NMAP_REPORT_MAX_BYTES) throw usageError('the report on standard input is larger than the 50 MiB limit');
      chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
  }
  let size: number;
  try {
    size = statSync(path).size;
  } catch (err) {
    throw usageError(`cannot read ${printable(path)}: ${messageOf(err)}`);
  }
  if (size > NMAP_REPORT_MAX_BYTES) throw usageError(`${printable(path)} is larger than the 50 MiB limit (${size} bytes)`);
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw usageError(`cannot read ${printable(path)}: ${messageOf(err)}`);
  }
}

export function registerImportCommand(program: Command): void {
  program
    .command('import')
    .description('Import an nmap XML report (nmap -oX FILE) as a completed scan, with risk, CVEs and changes as for a scan')
    .argument('<file>', 'the nmap XML report, or - for standard input')
    .option('--json', 'print the scan record as JSON instead of a summary')
    .action(
      action(async (file: string, options: { json?: boolean }) => {
        const xml = await readReport(file);
        await withServices(async ({ store, scans: manager }) => {
          let scan;
          try {
            const plan = await readNmapReport(xml);
            scan = await manager.importReport(plan, { actor: { name: CLI_ACTOR.actor, type: CLI_ACTOR.actorType }, bytes: Buffer.byteLength(xml) });
          } catch (err) {
            if (err instanceof RefusedError) {
              // The API's messages name the body; here the body is the file.
              throw new CliError(`${printable(file)}: ${err.message.replace(/^body: /, '')}`, err instanceof InvalidInputError ? 2 : 1);
            }
            throw err;
          } finally {
            await manager.shutdown();
          }
          const record = toScanRecord(scan);
          if (options.json) {
            console.log(JSON.stringify(record, null, 2));
            return;
          }
          const changes = await store.changes.list({ scanId: scan.id, limit: 1000, offset: 0 });
          console.log(
            `scan ${record.scan_id}: imported ${record.profile} scan of ${record.subnet}: ${record.devices_found} device(s) found; ` +
              `${changes.total} change(s) since the previous scan`,
          );
          for (const c of changes.rows.slice(0, 20)) console.log(`  [${c.severity}] ${printable(c.description)}`);
          if (changes.total > 20) console.log(`  … and ${changes.total - 20} more (netwarden watch, or GET /api/changes?scan_id=${record.scan_id})`);
          for (const warning of record.warnings) console.log(`warning: ${printable(warning)}`);
        });
      }),
    );
}
