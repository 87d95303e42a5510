/**
 * `netwarden schedule list|add|remove`, run as the real program against a datastore a real server
 * also uses: the CLI applies the API's rules (same validation, same scope guard, same audit
 * entries), and what one adds the other sees.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, oneCliDatastore, client, expectRefused, runCli, startServeWithAdmin, type CliDatastore, type ServeProcess } from './helpers.js';

/** Each test runs the program a dozen times; on a busy 2-core machine one run can take 2–3 s. */
const CLI_TEST_TIMEOUT_MS = 120_000;

describe.each(oneCliDatastore('sqlite'))('netwarden schedule ($kind)', ({ create }) => {
  let ds: CliDatastore;
  let serve: ServeProcess;
  let http: ReturnType<typeof client>;
  let cookie: string;

  beforeAll(async () => {
    ds = await create();
    ({ serve, http, cookie } = await startServeWithAdmin(ds));
  });
  afterAll(async () => {
    await serve?.stop();
    await ds?.cleanup();
  });

  it('lists nothing at first, with a hint', async () => {
    const result = await runCli(ds, ['schedule', 'list']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/No schedules\. Add one with: netwarden schedule add/);
    expect(JSON.parse((await runCli(ds, ['schedule', 'list', '--json'])).stdout)).toEqual([]);
  });

  it(
    'adds schedules the API then shows, and lists the API’s too',
    async () => {
      const added = await runCli(ds, ['schedule', 'add', '--name', 'nightly', '--cron', '0 3 * * *', '--subnet', '127.0.6.0/30']);
      expect(added.code, added.stderr).toBe(0);
      expect(added.stdout).toMatch(/^Added schedule \d+ 'nightly' \(0 3 \* \* \* UTC, next run \d{4}-\d\d-\d\dT03:00:00\.000Z\)\.\n$/);

      const quiet = await runCli(ds, [
        'schedule',
        'add',
        '--name',
        'weekly',
        '--cron',
        '30 4 * * sun',
        '--timezone',
        'Europe/Berlin',
        '--profile',
        'quick',
        '--disabled',
      ]);
      expect(quiet.code, quiet.stderr).toBe(0);
      expect(quiet.stdout).toMatch(/'weekly' \(30 4 \* \* sun Europe\/Berlin, disabled\)/);

      const viaApi = await http('/api/schedules', {
        method: 'POST',
        cookie,
        json: { name: 'from the api', cron: '*/30 * * * *', subnet: '127.0.7.0/30' },
      });
      expect(viaApi.status).toBe(201);

      const api = await bodyOf(await http('/api/schedules', { cookie }));
      expect(api.map((s: { name: string }) => s.name)).toEqual(['nightly', 'weekly', 'from the api']);
      expect(api[0]).toMatchObject({ cron: '0 3 * * *', timezone: 'UTC', profile: 'normal', subnet: '127.0.6.0/30', enabled: true });
      expect(api[1]).toMatchObject({ timezone: 'Europe/Berlin', profile: 'quick', subnet: null, enabled: false, next_run_at: null });

      const json = JSON.parse((await runCli(ds, ['schedule', 'list', '--json'])).stdout);
      expect(json).toEqual(api);
      const table = await runCli(ds, ['schedule', 'list']);
      expect(table.code).toBe(0);
      const lines = table.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^ID\s+NAME\s+CRON\s+TIMEZONE\s+PROFILE\s+SUBNET\s+ENABLED\s+NEXT RUN\s+LAST SCAN$/);
      expect(lines).toHaveLength(4);
      expect(lines[1]).toMatch(/nightly\s+0 3 \* \* \*\s+UTC\s+normal\s+127\.0\.6\.0\/30\s+yes\s+\d{4}-\d\d-\d\d 03:00Z\s+-$/);
      expect(lines[2]).toMatch(/weekly\s+30 4 \* \* sun\s+Europe\/Berlin\s+quick\s+\(network\.subnet\)\s+no\s+-\s+-$/);

      const audit = await bodyOf(await http('/api/audit-logs?action=schedule_created', { cookie }));
      expect(audit.filter((e: { actor: string }) => e.actor === 'cli')).toHaveLength(2);
      expect(audit.find((e: { actor: string }) => e.actor === 'cli')).toMatchObject({ actor_type: 'system', resource_type: 'schedule' });
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'refuses bad values with the API’s messages and exit status 2',
    async () => {
      const add = (...args: string[]) => runCli(ds, ['schedule', 'add', ...args]);
      expectRefused(await add('--name', 'x', '--cron', '* * * * * *'), 2, /cron: has 6 fields \(a seconds field is not supported\)/);
      expectRefused(await add('--name', 'x', '--cron', 'sometimes'), 2, /cron: /);
      expectRefused(await add('--name', 'x', '--cron', '0 3 * * *', '--timezone', 'Mars/Olympus'), 2, /timezone: must be an IANA time zone name/);
      expectRefused(await add('--name', 'x', '--cron', '0 3 * * *', '--timezone', ''), 2, /timezone: /);
      expectRefused(await add('--name', 'nightly', '--cron', '0 3 * * *'), 2, /name: a schedule named 'nightly' already exists/);
      expectRefused(await add('--name', '  ', '--cron', '0 3 * * *'), 2, /name: must not be blank/);
      expectRefused(await add('--name', 'x', '--cron', '0 3 * * *', '--subnet', 'lan'), 2, /subnet: /);
      expectRefused(
        await add('--name', 'x', '--cron', '0 3 * * *', '--subnet', '192.168.1.0/24'),
        2,
        /subnet: .*outside the allowed scan targets \(NETWARDEN_SCAN_ALLOW/,
      );
      expectRefused(await add('--name', 'x', '--cron', '0 3 * * *', '--profile', 'deep'), 2, /profile: must be one of quick, normal, intensive/);
      expectRefused(await add('--name', 'x'), 2, /required option '--cron <pattern>' not specified/);
      expect(JSON.parse((await runCli(ds, ['schedule', 'list', '--json'])).stdout)).toHaveLength(3);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'removes a schedule by name or id, and says so when there is none',
    async () => {
      const byName = await runCli(ds, ['schedule', 'remove', 'weekly']);
      expect(byName.code, byName.stderr).toBe(0);
      expect(byName.stdout).toMatch(/^Removed schedule \d+ 'weekly'\.\n$/);
      const list = JSON.parse((await runCli(ds, ['schedule', 'list', '--json'])).stdout);
      const id = list.find((s: { name: string }) => s.name === 'nightly').id;
      const byId = await runCli(ds, ['schedule', 'remove', String(id)]);
      expect(byId.code, byId.stderr).toBe(0);
      expect(byId.stdout).toBe(`Removed schedule ${id} 'nightly'.\n`);
      expect((await http(`/api/schedules/${id}`, { cookie })).status).toBe(404);

      expectRefused(await runCli(ds, ['schedule', 'remove', 'nightly']), 1, /no schedule with id or name 'nightly'/);
      expectRefused(await runCli(ds, ['schedule', 'remove', '999999']), 1, /no schedule with id or name '999999'/);
      expectRefused(await runCli(ds, ['schedule', 'remove']), 2, /missing required argument 'schedule'/);
      const deleted = await bodyOf(await http('/api/audit-logs?action=schedule_deleted', { cookie }));
      expect(deleted.map((e: { actor: string }) => e.actor)).toEqual(['cli', 'cli']);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
