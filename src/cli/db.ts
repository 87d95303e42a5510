import type { Command } from 'commander';
import { migrateToLatest } from '../store/db.js';
import { CliError, action, describeDatabase, loadConfig, messageOf, openDatabaseHandle } from './common.js';

export function registerDbCommands(program: Command): void {
  const db = program.command('db').description('Database maintenance');

  db.command('migrate')
    .description('Apply pending schema migrations (serve and the other commands also do this at start)')
    .action(
      action(async () => {
        const config = loadConfig();
        const where = describeDatabase(config.databaseUrl);
        const handle = await openDatabaseHandle(config);
        try {
          const { applied } = await migrateToLatest(handle).catch((err: unknown) => {
            throw new CliError(`migrating ${where} failed: ${messageOf(err)}`);
          });
          if (applied.length === 0) {
            process.stdout.write(`Database ${where} is up to date.\n`);
          } else {
            for (const name of applied) process.stdout.write(`Applied migration ${name}\n`);
            process.stdout.write(`Database ${where} is up to date (${applied.length} migration${applied.length === 1 ? '' : 's'} applied).\n`);
          }
        } finally {
          await handle.close().catch(() => {});
        }
      }),
    );
}
