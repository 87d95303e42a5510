/**
 * test/lab/responders.mjs, the responders the namespace lab will run on its hosts, started for
 * real on a loopback address (ports chosen by the OS) and examined by runProbes: each protocol
 * answers as the identity given on its command line. It refuses addresses outside loopback and
 * the lab.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PROBE_SETTINGS, runProbes } from '../../src/probes/index.js';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), '..', 'lab', 'responders.mjs');
const ADDRESS = '127.0.0.5';

let dir: string;
let child: ChildProcess;
let ports: { mdns: number; ssdp: number; netbios: number; snmp: number; http: number };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'netwarden-lab-responders-'));
  const ready = join(dir, 'ready.json');
  const args = ['--address', ADDRESS, '--name', 'phone7', '--model', 'iPhone15,2', '--vendor', 'Apple', '--mac', '02:aa:bb:cc:dd:07'];
  for (const p of ['mdns', 'ssdp', 'netbios', 'snmp', 'http']) args.push(`--${p}-port`, '0');
  child = spawn(process.execPath, [SCRIPT, ...args, '--ready', ready], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  for (let i = 0; i < 200 && !existsSync(ready); i++) {
    if (child.exitCode !== null) throw new Error(`responders.mjs exited: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  ports = (JSON.parse(readFileSync(ready, 'utf8')) as { ports: typeof ports }).ports;
});
afterAll(async () => {
  if (child?.pid && child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  await rm(dir, { recursive: true, force: true });
});

describe('lab responders', () => {
  it('answer every UDP probe as the identity they were given', async () => {
    const results = await runProbes(
      { ip: ADDRESS, openTcpPorts: [] },
      { ...DEFAULT_PROBE_SETTINGS, probes: ['mdns', 'ssdp', 'netbios', 'snmp'] },
      undefined,
      {
        ports,
      },
    );
    expect(results.mdns).toMatchObject({ names: ['phone7.local'], services: ['_http._tcp'], instances: ['phone7._http._tcp.local'] });
    expect(results.mdns?.txt.model).toBe('iPhone15,2');
    expect(results.ssdp).toMatchObject({
      manufacturer: 'Apple',
      modelName: 'iPhone15,2',
      friendlyName: 'phone7',
      udn: expect.stringMatching(/^uuid:phone7-/),
    });
    expect(results.netbios).toEqual({ name: 'PHONE7', workgroup: 'WORKGROUP', mac: '02:AA:BB:CC:DD:07' });
    expect(results.snmp).toMatchObject({ community: 'public', sysName: 'phone7', engineId: '80001f880302aabbccdd07' });
  });

  it('refuse an address outside loopback and the lab', async () => {
    const refused = spawn(process.execPath, [SCRIPT, '--address', '192.168.1.10'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    refused.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise((r) => refused.once('exit', r));
    expect(code).toBe(2);
    expect(stderr).toContain('neither loopback');
  });
});
