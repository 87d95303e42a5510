import type { Command } from 'commander';
import { generateApiKey } from '../auth/tokens.js';
import { toKeyRecord } from '../store/api-keys.js';
import { addSeconds, nowIso } from '../store/clock.js';
import { CLI_ACTOR, CliError, action, positiveInteger, printable, shortTime, table, usageError, withStore } from './common.js';

/** Same limits as POST /api/keys. */
const NAME_MAX_LENGTH = 100;
const MAX_EXPIRY_DAYS = 3650;

export function registerKeyCommands(program: Command): void {
  const keys = program.command('keys').description('Manage API keys directly in the datastore (no web session needed)');

  keys
    .command('create')
    .description('Create an API key and print it once on standard output')
    .argument('<name>', `a name that says who uses the key (1-${NAME_MAX_LENGTH} characters)`)
    .option('--expires-in-days <days>', `expire the key after this many days (1-${MAX_EXPIRY_DAYS}; default: never)`)
    .addHelpText(
      'after',
      '\nOnly the key goes to standard output, so `KEY=$(netwarden keys create grafana)` captures it;\nthe explanation goes to standard error. The key cannot be shown again.',
    )
    .action(
      action(async (rawName: string, options: { expiresInDays?: string }) => {
        const name = rawName.trim();
        if (!name) throw usageError('name: must not be blank');
        if (name.length > NAME_MAX_LENGTH) throw usageError(`name: must be at most ${NAME_MAX_LENGTH} characters`);
        const days = options.expiresInDays === undefined ? undefined : positiveInteger(options.expiresInDays, '--expires-in-days', MAX_EXPIRY_DAYS);
        await withStore(async (store) => {
          const { key, prefix, hash } = generateApiKey();
          const now = nowIso();
          const row = await store.apiKeys.create({
            name,
            prefix,
            key_hash: hash,
            created_by: null,
            created_at: now,
            expires_at: days ? addSeconds(now, days * 86_400) : null,
          });
          await store.audit.write({
            action: 'api_key_created',
            ...CLI_ACTOR,
            resourceType: 'api_key',
            resourceId: row.id,
            details: { name, prefix, expires_at: row.expires_at },
            success: true,
          });
          process.stderr.write(
            `Created API key ${row.id} '${printable(name)}' (prefix ${prefix}, ${row.expires_at ? `expires ${row.expires_at}` : 'never expires'}).\n` +
              'Store it now: it is shown only this once. Send it as the X-API-Key header.\n',
          );
          process.stdout.write(`${key}\n`);
        });
      }),
    );

  keys
    .command('list')
    .description('List API keys (never their values)')
    .option('--json', 'print a JSON array shaped like GET /api/keys')
    .action(
      action(async (options: { json?: boolean }) => {
        await withStore(async (store) => {
          const records = (await store.apiKeys.list()).map(toKeyRecord);
          if (options.json) {
            process.stdout.write(`${JSON.stringify(records, null, 2)}\n`);
            return;
          }
          if (records.length === 0) {
            process.stdout.write('No API keys. Create one with: netwarden keys create <name>\n');
            return;
          }
          const rows = records.map((r) => [
            String(r.id),
            printable(r.name),
            r.prefix,
            r.status,
            shortTime(r.created_at),
            r.last_used_at ? shortTime(r.last_used_at) : 'never',
            r.expires_at ? shortTime(r.expires_at) : 'never',
          ]);
          process.stdout.write(table(['ID', 'NAME', 'PREFIX', 'STATUS', 'CREATED', 'LAST USED', 'EXPIRES'], rows));
        });
      }),
    );

  keys
    .command('revoke')
    .description('Revoke an API key: a running service refuses it within a second')
    .argument('<id>', 'the key id shown by `netwarden keys list`')
    .action(
      action(async (rawId: string) => {
        const id = positiveInteger(rawId, 'key id');
        await withStore(async (store) => {
          const existing = await store.apiKeys.get(id);
          if (!existing) throw new CliError(`no API key with id ${id} (see: netwarden keys list)`);
          if (existing.revoked_at) {
            process.stdout.write(`API key ${id} '${printable(existing.name)}' was already revoked at ${existing.revoked_at}.\n`);
            return;
          }
          await store.apiKeys.revoke(id);
          await store.audit.write({
            action: 'api_key_revoked',
            ...CLI_ACTOR,
            resourceType: 'api_key',
            resourceId: id,
            details: { name: existing.name, prefix: existing.prefix },
            success: true,
          });
          process.stdout.write(`Revoked API key ${id} '${printable(existing.name)}'.\n`);
        });
      }),
    );
}
