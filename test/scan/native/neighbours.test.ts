import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseIpNeighJson, parseProcNetArp, readNeighbourTable } from '../../../src/engines/native/neighbours.js';

const SAMPLE = `IP address       HW type     Flags       HW address            Mask     Device
192.168.1.1      0x1         0x2         a4:91:b1:0c:22:33     *        eth0
192.168.1.20     0x1         0x0         00:00:00:00:00:00     *        eth0
192.168.1.30     0x1         0x6         3c:22:fb:aa:bb:cc     *        eth0
10.66.0.11       0x1         0x2         02:42:0a:42:00:0b     *        nwlab0
192.168.1.40     0x1         0x2         00:00:00:00:00:00     *        eth0
garbage line
`;

describe('parseProcNetArp', () => {
  it('keeps complete entries with a MAC, normalised', () => {
    const table = parseProcNetArp(SAMPLE);
    expect([...table.keys()]).toEqual(['192.168.1.1', '192.168.1.30', '10.66.0.11']);
    expect(table.get('192.168.1.1')).toEqual({ ip: '192.168.1.1', mac: 'A4:91:B1:0C:22:33', device: 'eth0' });
    expect(table.get('10.66.0.11')?.mac).toBe('02:42:0A:42:00:0B');
    expect(table.has('192.168.1.20')).toBe(false); // incomplete (0x0)
  });

  it('handles an empty table', () => {
    expect(parseProcNetArp('IP address       HW type     Flags       HW address            Mask     Device\n').size).toBe(0);
    expect(parseProcNetArp('').size).toBe(0);
  });
});

describe('readNeighbourTable', () => {
  it('reads a file and returns an empty table when it is missing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'netwarden-arp-'));
    try {
      const file = join(dir, 'arp');
      await writeFile(file, SAMPLE);
      expect((await readNeighbourTable(file)).size).toBe(3);
      expect((await readNeighbourTable(join(dir, 'missing'))).size).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads the real kernel table without failing', async () => {
    const table = await readNeighbourTable();
    for (const entry of table.values()) expect(entry.mac).toMatch(/^[0-9A-F]{2}(:[0-9A-F]{2}){5}$/);
  });
});

describe('parseIpNeighJson', () => {
  it('reads the state and the seconds since the last confirmation of each IPv4 entry', () => {
    const text = JSON.stringify([
      { dst: '10.66.0.13', dev: 'nwlab0', lladdr: '02:66:00:66:00:03', used: 3, confirmed: 12, updated: 3, probes: 0, state: ['REACHABLE'] },
      { dst: '10.66.0.9', dev: 'nwlab0', used: 4, confirmed: 64, updated: 0, probes: 6, state: ['FAILED'] },
      { dst: '10.66.0.20', dev: 'nwlab0', lladdr: '02:66:00:66:00:14', state: ['PERMANENT'] },
      { dst: 'fe80::1', dev: 'eth0', state: ['STALE'] },
      { dev: 'eth0' },
    ]);
    const table = parseIpNeighJson(text);
    expect([...table.values()]).toEqual([
      { ip: '10.66.0.13', states: ['REACHABLE'], confirmedSecondsAgo: 12 },
      { ip: '10.66.0.9', states: ['FAILED'], confirmedSecondsAgo: 64 },
      { ip: '10.66.0.20', states: ['PERMANENT'], confirmedSecondsAgo: null },
    ]);
  });

  it('is empty for output it does not understand', () => {
    expect(parseIpNeighJson('').size).toBe(0);
    expect(parseIpNeighJson('{"dst":"10.0.0.1"}').size).toBe(0);
    expect(parseIpNeighJson('not json').size).toBe(0);
  });
});
