import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { IntelFormatError, ageInDays, detectIntelKind, parseEpss, parseKev, type EpssFile, type KevCatalog } from '../core/intel.js';
import { nowIso } from '../store/clock.js';
import type { EpssFact, KevFact } from '../store/intel.js';
import { CLI_ACTOR, CliError, action, messageOf, printable, table, withStore } from './common.js';

/** A file's text: gunzipped when its first bytes are gzip's magic number, whatever its name. */
export function readIntelFile(path: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw new CliError(`${path}: cannot read it: ${messageOf(err)}`);
  }
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = gunzipSync(bytes);
    } catch (err) {
      throw new CliError(`${path}: looks gzip-compressed but cannot be decompressed: ${messageOf(err)}`);
    }
  }
  return bytes.toString('utf8');
}

export function registerIntelCommand(program: Command): void {
  const intel = program.command('intel').description('Exploit intelligence: CISA Known Exploited Vulnerabilities and FIRST EPSS scores');

  intel
    .command('import')
    .description('Import the CISA KEV catalogue (JSON) and/or FIRST EPSS scores (CSV), gzip or plain; offline')
    .argument('<file...>', 'known_exploited_vulnerabilities.json and/or epss_scores-YYYY-MM-DD.csv[.gz]')
    .addHelpText(
      'after',
      '\nThe kind of each file (KEV or EPSS) and its compression are detected from its content. Every\n' +
        'file is checked before anything is written. The data is stored in the database: every instance\n' +
        'uses it within seconds. A KEV import replaces the catalogue; an EPSS import replaces the scores\n' +
        'of the CVEs it lists (others keep theirs, with their own date).\n\n' +
        'Example:\n  netwarden intel import known_exploited_vulnerabilities.json epss_scores-2026-11-26.csv.gz',
    )
    .action(
      action(async (files: string[]) => {
        const parsed: { name: string; data: KevCatalog | EpssFile }[] = [];
        for (const file of files) {
          const text = readIntelFile(file);
          const name = basename(file);
          try {
            const kind = detectIntelKind(text);
            if (kind === null) throw new IntelFormatError(`${name}: neither CISA's KEV catalogue (JSON) nor an FIRST EPSS CSV (cve,epss,percentile)`);
            parsed.push({ name, data: kind === 'kev' ? parseKev(text, name) : parseEpss(text, name) });
          } catch (err) {
            if (err instanceof IntelFormatError) throw new CliError(`${printable(err.message)}; nothing was imported`);
            throw err;
          }
        }
        await withStore(async (store) => {
          for (const { name, data } of parsed) {
            const now = nowIso();
            if (data.kind === 'kev') {
              const entries = new Map<string, KevFact>(
                data.entries.map((e) => [e.cve_id, { date_added: e.date_added, ransomware: e.ransomware, due_date: e.due_date }]),
              );
              const detail = data.version ? `catalog ${data.version}` : null;
              await store.intel.replaceKev(entries, { imported_at: now, as_of: data.released, entries: entries.size, detail });
              process.stdout.write(
                `${printable(name)}: KEV catalogue${detail ? ` ${printable(detail)}` : ''}, ${entries.size} known exploited CVEs.\n`,
              );
            } else {
              const asOf = data.as_of ?? now.slice(0, 10);
              const entries = new Map<string, EpssFact>(
                data.entries.map((e) => [e.cve_id, { score: e.score, percentile: e.percentile, as_of: asOf }]),
              );
              const detail = data.model_version ? `model ${data.model_version}` : null;
              await store.intel.upsertEpss(entries, { imported_at: now, as_of: asOf, entries: entries.size, detail });
              process.stdout.write(`${printable(name)}: EPSS scores of ${asOf}, ${entries.size} CVEs.\n`);
            }
            await store.audit.write({
              action: 'intel_imported',
              ...CLI_ACTOR,
              details: { file: name, source: data.kind, entries: data.entries.length },
              success: true,
            });
          }
        });
      }),
    );

  intel
    .command('status')
    .description('Show each source (KEV, EPSS): when it was imported, its date and age, how many entries')
    .action(
      action(async () => {
        await withStore(async (store) => {
          const sources = new Map((await store.intel.sources()).map((s) => [s.source, s]));
          const now = new Date();
          const rows = (['kev', 'epss'] as const).map((source) => {
            const s = sources.get(source);
            if (!s) return [source.toUpperCase(), 'never imported', '-', '-', '0'];
            const age = ageInDays(s.as_of ?? s.imported_at, now);
            return [source.toUpperCase(), s.imported_at, s.as_of ?? '-', age === null ? '-' : `${age} day${age === 1 ? '' : 's'}`, String(s.entries)];
          });
          process.stdout.write(table(['SOURCE', 'IMPORTED', 'DATA OF', 'AGE', 'ENTRIES'], rows));
        });
      }),
    );
}
