/**
 * `netwarden export devices|changes` as an operator runs it: the real program over a datastore
 * seeded as scans write it; what it prints is compared with what the store's lists return.
 */
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedInventory as seedManyDevices } from '../../bench/inventory.mjs';
import { EXPORT_PAGE_SIZE } from '../../src/core/limits.js';
import type { Store } from '../../src/store/index.js';
import { parseCsv } from '../helpers/csv.js';
import { seedInventory, type Seed } from '../helpers/seed.js';
import { BIN, baseEnv, oneCliDatastore, expectRefused, openDatastore, runCli, type CliDatastore, type CliResult } from './helpers.js';

/** Runs `netwarden <args>` keeping all of a large standard output (runCli's buffer is 1 MiB). */
function runBig(ds: CliDatastore, args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...baseEnv(), ...ds.env }, maxBuffer: 256 * 1024 * 1024, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
  });
}

const ok = (result: CliResult) => {
  expect(result.code, `stderr: ${result.stderr}`).toBe(0);
  expect(result.stderr).toBe('');
  return result.stdout;
};

describe.each(oneCliDatastore('postgres'))('netwarden export ($kind)', ({ create }) => {
  let ds: CliDatastore;
  let store: Store;
  let seed: Seed;

  beforeAll(async () => {
    ds = await create();
    store = await openDatastore(ds);
    seed = await seedInventory(store);
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    await ds?.cleanup();
  });

  const devices = async (filters = {}) => JSON.parse(JSON.stringify((await store.devices.list({ ...filters, limit: 1000, offset: 0 })).rows));
  const changes = async (filters = {}) => JSON.parse(JSON.stringify((await store.changes.list({ ...filters, limit: 1000, offset: 0 })).rows));

  it('writes every device as JSON by default and as CSV with --format csv', async () => {
    await store.devices.updateUserFields(seed.devices.nas.id, { label: '=cmd|" /C calc"!A0', notes: 'two\nlines, "quoted"' });
    const want = await devices();
    expect(JSON.parse(ok(await runCli(ds, ['export', 'devices'])))).toEqual(want);
    const csv = ok(await runCli(ds, ['export', 'devices', '--format', 'csv']));
    expect(csv).toMatch(
      /^id,ip_address,mac_address,hostname,vendor,device_type,os_name,label,zone,is_trusted,notes,risk_level,risk_score,open_ports,/,
    );
    const [header, ...rows] = parseCsv(csv);
    expect(rows.map((r) => Number(r[0]))).toEqual(want.map((d: { id: number }) => d.id));
    const nas = rows.find((r) => Number(r[0]) === seed.devices.nas.id)!;
    expect(nas[header.indexOf('label')]).toBe(`'=cmd|" /C calc"!A0`);
    expect(nas[header.indexOf('notes')]).toBe('two\nlines, "quoted"');
    expect(csv).toContain('"two\nlines, ""quoted"""');
  });

  it('takes the list filters as options', async () => {
    const filtered = JSON.parse(ok(await runCli(ds, ['export', 'devices', '--risk-level', 'high', '--online', 'true'])));
    expect(filtered).toEqual(await devices({ riskLevel: 'high', online: true }));
    const scanned = JSON.parse(ok(await runCli(ds, ['export', 'devices', '--scan-id', String(seed.scans.first.id), '--q', '192.168'])));
    expect(scanned).toEqual(await devices({ scanId: seed.scans.first.id, search: '192.168' }));
    expect(scanned.length).toBeGreaterThan(0);
    const info = ok(await runCli(ds, ['export', 'changes', '--severity', 'info', '--format', 'csv']));
    const want = await changes({ severity: 'info' });
    expect(want.length).toBeGreaterThan(0);
    const [header, ...rows] = parseCsv(info);
    expect(header).toEqual(Object.keys(want[0]));
    expect(rows.map((r) => Number(r[0]))).toEqual(want.map((c: { id: number }) => c.id));
    const byDevice = JSON.parse(ok(await runCli(ds, ['export', 'changes', '--device-id', String(seed.devices.camera.id)])));
    expect(byDevice).toEqual(await changes({ deviceId: seed.devices.camera.id }));
  });

  it('exports the devices of one subnet with --subnet', async () => {
    // 192.168.50.0/29 holds .0 to .7: the router (.1) among them, not the devices above .7.
    const few = JSON.parse(ok(await runCli(ds, ['export', 'devices', '--subnet', '192.168.50.0/29'])));
    const inBlock = (await devices()).filter((d: { ip_address: string }) => Number(d.ip_address.split('.')[3]) < 8);
    expect(few).toEqual(inBlock);
    expect(few.map((d: { id: number }) => d.id)).toContain(seed.devices.router.id);
    expect(few.length).toBeLessThan((await devices()).length);
    expectRefused(await runCli(ds, ['export', 'devices', '--subnet', '192.168.50.7']), 2, /--subnet: must be an IPv4 CIDR network/);
    expectRefused(await runCli(ds, ['export', 'changes', '--subnet', '192.168.50.0/24']), 2, /--subnet does not apply to changes/);
  });

  it('refuses what it does not know, naming the option', async () => {
    expectRefused(await runCli(ds, ['export', 'hosts']), 2, /devices or changes/);
    expectRefused(await runCli(ds, ['export', 'devices', '--format', 'xml']), 2, /--format must be csv or json/);
    expectRefused(
      await runCli(ds, ['export', 'devices', '--risk-level', 'severe']),
      2,
      /--risk-level: must be one of critical, high, medium, low, none/,
    );
    expectRefused(await runCli(ds, ['export', 'devices', '--is-trusted', 'yes']), 2, /--is-trusted: must be true or false/);
    expectRefused(await runCli(ds, ['export', 'devices', '--severity', 'high']), 2, /--severity does not apply to devices/);
    expectRefused(await runCli(ds, ['export', 'changes', '--device-id', '0']), 2, /--device-id: /);
    expectRefused(await runCli(ds, ['export', 'devices', '--scan-id', '99999']), 1, /scan not found/);
  });

  it('streams more than a page of devices complete', async () => {
    await seedManyDevices(store, EXPORT_PAGE_SIZE * 2 + 10, 3);
    store.touch();
    const total = (await store.devices.list({ limit: 1, offset: 0 })).total;
    const all = JSON.parse(ok(await runBig(ds, ['export', 'devices'])));
    expect(all.length).toBe(total);
    expect(new Set(all.map((d: { id: number }) => d.id)).size).toBe(total);
    const [, ...rows] = parseCsv(ok(await runBig(ds, ['export', 'devices', '--format', 'csv'])));
    expect(rows.map((r) => Number(r[0]))).toEqual(all.map((d: { id: number }) => d.id));
  }, 120_000);
});
