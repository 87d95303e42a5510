import { createReadStream, createWriteStream, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { backupFileName, openBackup, type BackupSummary } from '../store/backup.js';
import { BackupFileError, RestoreRefusedError, assertNotInUse, databaseMigrations, inspectBackup, restoreBackup } from '../store/restore.js';
import type { DatabaseHandle } from '../store/db.js';
import { describeMarkers, liveMarkers } from '../store/run-markers.js';
import { VERSION } from '../version.js';
import { CLI_ACTOR, CliError, action, describeDatabase, loadConfig, messageOf, openDatabaseHandle, usageError, withStore } from './common.js';

const BACKUP_HELP = `
The backup is one gzip'd JSON-lines file holding every table (users, password and key hashes,
sessions, configuration, inventory, history, audit log): keep it as private as the database.
It is consistent even while the service runs and writes. Restore it with \`netwarden restore\`,
into SQLite or PostgreSQL alike.`;

const RESTORE_HELP = `
Every table is replaced in one transaction: after a restore the data is exactly what was backed
up (plus an audit entry restore_completed); if anything fails, nothing changes. A file whose
checksum does not match its content, or with a row that does not fit its column (a setting that
is not JSON, text where a number belongs), is refused as damaged. A backup from an
older Netwarden is brought up to date by the newer migrations; one from a newer Netwarden is
refused. Stop the service (and every other netwarden command using the data) first: restore
refuses while one runs. By default the current data is first saved to
<data dir>/netwarden-pre-restore-<time>.jsonl.gz, so the restore can be undone by restoring that.`;

export function registerBackupCommands(program: Command): void {
  program
    .command('backup')
    .description('Write a consistent backup of the whole database to a file (works while the service runs)')
    .argument(
      '<file>',
      'file to write (replaced when the backup is complete), a directory to write netwarden-backup-<time>.jsonl.gz into, or - for standard output',
    )
    .addHelpText('after', BACKUP_HELP)
    .action(
      action(async (target: string) => {
        const intoDirectory = target !== '-' && isDirectory(target);
        if (target !== '-' && !intoDirectory && !isDirectory(dirname(resolve(target)))) {
          throw usageError(`${target}: the directory ${dirname(resolve(target))} does not exist`);
        }
        await withStore(async (store, config) => {
          const where = describeDatabase(config.databaseUrl);
          const destination: Destination = target === '-' ? null : (name) => (intoDirectory ? join(resolve(target), name) : resolve(target));
          let file = target === '-' ? 'standard output' : resolve(target);
          try {
            const written = await writeBackup(store.handle, destination);
            file = written.file;
            const { summary } = written;
            await store.audit.write({
              action: 'backup_created',
              ...CLI_ACTOR,
              resourceType: 'backup',
              details: { file, tables: Object.keys(summary.rows).length, rows: summary.totalRows, migrations: summary.header.migrations },
              success: true,
            });
            // With -, standard output is the backup itself.
            const out = target === '-' ? process.stderr : process.stdout;
            out.write(`Backup of ${where} written to ${file}: ${Object.keys(summary.rows).length} tables, ${summary.totalRows} rows.\n`);
          } catch (err) {
            await store.audit
              .write({ action: 'backup_created', ...CLI_ACTOR, resourceType: 'backup', details: { file, error: messageOf(err) }, success: false })
              .catch(() => {});
            throw new CliError(`backup of ${where} to ${file} failed: ${messageOf(err)}`);
          }
        });
      }),
    );

  program
    .command('restore')
    .description('Replace all data with a backup made by `netwarden backup` or GET /api/backup (stop the service first)')
    .argument('<file>', 'the backup file')
    .option('--no-safety-backup', 'do not save the current data to the data directory first')
    .addHelpText('after', RESTORE_HELP)
    .action(
      action(async (file: string, options: { safetyBackup: boolean }) => {
        const config = loadConfig();
        const where = describeDatabase(config.databaseUrl);
        const path = resolve(file);

        // Refusals that need no database come first: a wrong file, a running service.
        await withFileErrors(file, () => withInput(path, (input) => inspectBackup(input)));
        await Promise.resolve()
          .then(() => refuseWhileRunning(config.dataDir))
          .catch(refusal);

        // One connection: on PostgreSQL, a second one of our own would hold the schema lock the restore needs.
        const handle = await openDatabaseHandle(config);
        try {
          await assertNotInUse(handle).catch(refusal);
          let safety: string | null = null;
          if (options.safetyBackup && (await databaseMigrations(handle)).length) {
            mkdirSync(config.dataDir, { recursive: true });
            const written = await writeBackup(handle, (name) => join(config.dataDir, name), 'netwarden-pre-restore').catch((err: unknown) => {
              throw new CliError(
                `could not save the current data first (${messageOf(err)}); nothing was changed. Use --no-safety-backup to restore without that copy`,
              );
            });
            safety = written.file;
          }
          const summary = await withFileErrors(file, () =>
            withInput(path, (input) =>
              restoreBackup(handle, input, {
                guard: () => refuseWhileRunning(config.dataDir),
                audit: { ...CLI_ACTOR, resourceType: 'backup', details: { file: path, ...(safety ? { safety_backup: safety } : {}) } },
              }),
            ),
          ).catch((err: unknown) => {
            // Nothing was changed, so the copy of the current data is not needed.
            if (safety) rmSync(safety, { force: true });
            return refusal(err);
          });
          const { header } = summary;
          process.stdout.write(
            `Restored ${path} into ${where}: ${Object.keys(summary.rows).length} tables, ${summary.totalRows} rows ` +
              `(backup of a ${header.dialect} database made by Netwarden ${header.version} at ${header.created_at}).\n`,
          );
          if (summary.checksum === 'absent') {
            process.stderr.write(
              `warning: ${path} has no checksum (backup format ${header.format_version}, made by Netwarden ${header.version} before backups carried one): ` +
                'every row was checked, but damage that still reads as valid data cannot be detected.\n',
            );
          }
          if (summary.upgradedWith.length) process.stdout.write(`Brought up to date with migration(s) ${summary.upgradedWith.join(', ')}.\n`);
          if (safety) process.stdout.write(`The previous data was saved to ${safety}; restore that file to undo.\n`);
        } finally {
          await handle.close().catch(() => {});
        }
      }),
    );
}

/** Where a backup goes: a path for the suggested file name, or null for standard output. */
type Destination = ((fileName: string) => string) | null;

/**
 * Takes a backup and writes it to its destination. A file is written aside (readable by its owner
 * only) and renamed into place once complete, so an existing file is only ever replaced by a
 * whole backup.
 */
async function writeBackup(handle: DatabaseHandle, destination: Destination, prefix?: string): Promise<{ file: string; summary: BackupSummary }> {
  const backup = await openBackup(handle, { version: VERSION });
  if (!destination) {
    await pipeline(backup.stream, process.stdout, { end: false });
    return { file: 'standard output', summary: await backup.finished };
  }
  const file = destination(prefix ? backupFileName(backup.header.created_at, prefix) : backup.fileName);
  const partial = `${file}.partial`;
  try {
    await pipeline(backup.stream, createWriteStream(partial, { mode: 0o600 }));
    const summary = await backup.finished;
    renameSync(partial, file);
    return { file, summary };
  } catch (err) {
    backup.stream.destroy();
    rmSync(partial, { force: true });
    throw err;
  }
}

function refuseWhileRunning(dataDir: string): void {
  const running = liveMarkers(dataDir);
  if (!running.length) return;
  throw new RestoreRefusedError(
    `Netwarden is running on the data directory ${dataDir}: ${describeMarkers(running)}. Stop it, then restore ` +
      `(a marker left behind by a process that is not Netwarden may be deleted: ${running.map((m) => m.file).join(', ')})`,
  );
}

function refusal(err: unknown): never {
  if (err instanceof RestoreRefusedError) throw new CliError(`cannot restore now: ${err.message}`);
  if (err instanceof CliError) throw err;
  throw new CliError(`restore failed, nothing was changed: ${messageOf(err)}`);
}

/** Turns a problem with the backup file into one sentence naming the file. */
async function withFileErrors<T>(file: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof BackupFileError) throw new CliError(`${file} ${err.message}; nothing was changed`);
    throw err;
  }
}

async function withInput<T>(path: string, fn: (input: Readable) => Promise<T>): Promise<T> {
  let stat;
  try {
    stat = statSync(path);
  } catch (err) {
    throw new CliError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : messageOf(err)}`);
  }
  if (!stat.isFile()) throw new CliError(`cannot read ${path}: not a file`);
  const input = createReadStream(path);
  try {
    return await fn(input);
  } finally {
    input.destroy();
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
