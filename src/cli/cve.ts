import type { Command } from 'commander';
import { CveDataError, importedFilePath, loadShippedCves, mergeCveData, readImportedFile, shippedFamilies } from '../cve/dataset.js';
import { FeedFormatError, importCveFiles, type FileImportReport } from '../cve/import.js';
import { CliError, action, loadConfig, printable } from './common.js';

export function registerCveCommand(program: Command): void {
  const cve = program.command('cve').description('The offline CVE data used to match scanned services');

  cve
    .command('import')
    .description('Import NVD JSON 2.0 feed files and/or the CISA Known Exploited Vulnerabilities catalog')
    .argument('<file...>', 'nvdcve-2.0-*.json[.gz] feed files, NVD API 2.0 answers, or known_exploited_vulnerabilities.json')
    .addHelpText(
      'after',
      '\nThe kind of each file is detected from its content. Every file is checked before anything is\n' +
        'written; the result is stored in <data dir>/cve-imported.json and merged over the shipped\n' +
        'dataset by CVE id. The service uses it from the next evaluation on (no restart needed).\n\n' +
        'Example:\n  netwarden cve import nvdcve-2.0-2024.json.gz nvdcve-2.0-2025.json.gz known_exploited_vulnerabilities.json',
    )
    .action(
      action(async (files: string[]) => {
        const config = loadConfig();
        let summary;
        try {
          summary = importCveFiles(files, config.dataDir);
        } catch (err) {
          if (err instanceof FeedFormatError || err instanceof CveDataError) throw new CliError(`${printable(err.message)}; nothing was imported`);
          throw err;
        }
        for (const report of summary.files) process.stdout.write(`${describe(report)}\n`);
        const totals = summary.files.reduce((t, r) => ({ added: t.added + r.added, updated: t.updated + r.updated, kev: t.kev + r.kevFlagsSet }), {
          added: 0,
          updated: 0,
          kev: 0,
        });
        process.stdout.write(
          `Total: ${totals.added} added, ${totals.updated} updated, ${totals.kev} KEV flag${totals.kev === 1 ? '' : 's'} set.\n` +
            `Saved to ${summary.path} (${summary.totalImported} imported CVE records, ${summary.totalKev} KEV entries). ` +
            'Matching uses it from the next scan evaluation on.\n',
        );
        const warnings = summary.files.flatMap((r) => r.warnings);
        if (warnings.length) {
          process.stderr.write(`${warnings.length} affected-product line(s) skipped (unreadable versions), e.g.:\n`);
          for (const w of warnings.slice(0, 5)) process.stderr.write(`  ${printable(w)}\n`);
        }
      }),
    );

  cve
    .command('status')
    .description('Show how many CVEs the shipped and imported data hold')
    .action(
      action(async () => {
        const config = loadConfig();
        let imported;
        try {
          imported = readImportedFile(config.dataDir);
        } catch (err) {
          throw new CliError(printable((err as Error).message));
        }
        const shipped = loadShippedCves();
        const merged = mergeCveData(shipped, imported);
        const lines = [
          `Shipped dataset: ${shipped.length} CVEs (${[...shippedFamilies()].map(([f, n]) => `${f} ${n}`).join(', ')})`,
          imported
            ? `Imported: ${imported.cves.length} CVE records, ${Object.keys(imported.kev).length} KEV entries, last import ${imported.updated_at ?? 'unknown'} (${importedFilePath(config.dataDir)})`
            : `Imported: nothing yet (would be stored in ${importedFilePath(config.dataDir)})`,
          `In use: ${merged.length} CVEs, ${merged.filter((e) => e.kev).length} known exploited`,
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
      }),
    );
}

function describe(r: FileImportReport): string {
  const name = printable(r.file);
  if (r.kind === 'nvd') {
    const extra = [
      r.unmatchable ? `${r.unmatchable} without an application CPE (not matchable, left out)` : null,
      r.skipped ? `${r.skipped} skipped (rejected or malformed)` : null,
      r.kevFlagsSet ? `${r.kevFlagsSet} KEV flag${r.kevFlagsSet === 1 ? '' : 's'} set` : null,
    ].filter(Boolean);
    return `${name}: NVD feed, ${r.read} CVE records: ${r.added} added, ${r.updated} updated${extra.length ? `, ${extra.join(', ')}` : ''}`;
  }
  return (
    `${name}: CISA KEV catalog${r.catalogVersion ? ` ${printable(r.catalogVersion)}` : ''}, ${r.read} entr${r.read === 1 ? 'y' : 'ies'}: ` +
    `KEV flag set on ${r.kevFlagsSet} CVE${r.kevFlagsSet === 1 ? '' : 's'}` +
    (r.kevWithoutRecord ? `, ${r.kevWithoutRecord} for CVEs not in the dataset (kept for later imports)` : '') +
    (r.skipped ? `, ${r.skipped} skipped (malformed)` : '')
  );
}
