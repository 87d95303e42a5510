import type { Command } from 'commander';
import { SCAN_PROFILES } from '../core/model.js';
import { CRON_HELP } from '../core/schedule.js';
import { ScheduleService, type ScheduleActor } from '../jobs/schedules.js';
import type { CommandServices } from '../services.js';
import { InvalidInputError, RefusedError } from '../util/errors.js';
import { CLI_ACTOR, CliError, action, printable, shortTime, table, usageError, withServices } from './common.js';

const ACTOR: ScheduleActor = { ...CLI_ACTOR, triggeredBy: CLI_ACTOR.actor };

/**
 * The schedule service over the CLI's store, with the rules of the API: the same validation, the
 * same scope guard (NETWARDEN_SCAN_ALLOW or scanning.allowed_targets), the same audit entries. Its
 * scan manager never starts a scan: a running server does that.
 */
function service({ store, scans }: CommandServices): ScheduleService {
  return new ScheduleService({ store, scans });
}

/** A refusal from the shared rules, as the CLI reports it: bad values exit 2, the rest 1. */
function cliErrorOf(err: unknown): unknown {
  if (err instanceof RefusedError) return new CliError(err.message, err instanceof InvalidInputError ? 2 : 1);
  return err;
}

export function registerScheduleCommands(program: Command): void {
  const schedule = program.command('schedule').description('Manage scan schedules directly in the datastore (a running server fires them)');

  schedule
    .command('list')
    .description('List scan schedules with their next run and the status of their last scan')
    .option('--json', 'print a JSON array shaped like GET /api/schedules')
    .action(
      action(async (options: { json?: boolean }) => {
        await withServices(async (services) => {
          const records = await service(services).list();
          if (options.json) {
            process.stdout.write(`${JSON.stringify(records, null, 2)}\n`);
            return;
          }
          if (records.length === 0) {
            process.stdout.write('No schedules. Add one with: netwarden schedule add --name nightly --cron "0 3 * * *"\n');
            return;
          }
          const rows = records.map((r) => [
            String(r.id),
            printable(r.name),
            r.cron,
            r.timezone,
            r.profile,
            r.subnet ?? '(network.subnet)',
            r.enabled ? 'yes' : 'no',
            r.next_run_at ? shortTime(r.next_run_at) : '-',
            r.last_status ? `${r.last_status} (scan ${r.last_scan_id})` : '-',
          ]);
          process.stdout.write(table(['ID', 'NAME', 'CRON', 'TIMEZONE', 'PROFILE', 'SUBNET', 'ENABLED', 'NEXT RUN', 'LAST SCAN'], rows));
        });
      }),
    );

  schedule
    .command('add')
    .description('Add a scan schedule')
    .requiredOption('--name <name>', 'a unique name, 1-100 characters')
    .requiredOption('--cron <pattern>', CRON_HELP)
    .option('--timezone <zone>', 'IANA time zone the pattern is read in', 'UTC')
    .option('--profile <profile>', `${SCAN_PROFILES.join(', ')} (default: scanning.default_profile)`)
    .option('--subnet <cidr>', 'IPv4 CIDR to scan (default: the configured network.subnet, read for each run)')
    .option('--disabled', 'save it without firing until enabled')
    .action(
      action(async (options: { name: string; cron: string; timezone: string; profile?: string; subnet?: string; disabled?: boolean }) => {
        await withServices(async (services) => {
          let created;
          try {
            created = await service(services).create(
              {
                name: options.name,
                cron: options.cron,
                timezone: options.timezone,
                profile: options.profile,
                subnet: options.subnet ?? null,
                enabled: !options.disabled,
              },
              ACTOR,
            );
          } catch (err) {
            throw cliErrorOf(err);
          }
          const when = created.next_run_at ? `next run ${created.next_run_at}` : 'disabled';
          process.stdout.write(`Added schedule ${created.id} '${printable(created.name)}' (${created.cron} ${created.timezone}, ${when}).\n`);
        });
      }),
    );

  schedule
    .command('remove')
    .description('Delete a scan schedule; its queued run, if any, is cancelled and its past scans stay')
    .argument('<schedule>', 'the id or name shown by `netwarden schedule list`')
    .action(
      action(async (ref: string) => {
        if (ref.trim() === '') throw usageError('schedule: give an id or a name');
        await withServices(async (services) => {
          const schedules = service(services);
          const found = await schedules.find(ref);
          if (!found) throw new CliError(`no schedule with id or name '${printable(ref)}' (see: netwarden schedule list)`);
          try {
            await schedules.remove(found.id, ACTOR);
          } catch (err) {
            throw cliErrorOf(err);
          }
          process.stdout.write(`Removed schedule ${found.id} '${printable(found.name)}'.\n`);
        });
      }),
    );
}
