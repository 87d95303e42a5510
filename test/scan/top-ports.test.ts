import { mkdtempSync, rmSync, writeFileSync, utimesSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILTIN_FREQUENT_PORTS } from '../../src/core/top-ports.js';
import { frequentTcpPorts, nmapServicesCandidates } from '../../src/engines/top-ports.js';

describe('frequentTcpPorts', () => {
  const dir = mkdtempSync(join(tmpdir(), 'netwarden-top-ports-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the first nmap-services file there is, and again when it changes', () => {
    const file = join(dir, 'nmap-services');
    writeFileSync(file, 'http\t80/tcp\t0.4\nhttp-proxy\t8080/tcp\t0.04\nrdp\t3389/tcp\t0.08\n');
    expect(frequentTcpPorts([join(dir, 'missing'), file])).toEqual({ ports: [80, 3389, 8080], source: file });
    writeFileSync(file, 'http\t80/tcp\t0.4\nhttp-proxy\t8080/tcp\t0.9\n');
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    expect(frequentTcpPorts([file]).ports).toEqual([8080, 80]);
  });

  it('falls back to the built-in ranking without a usable file', () => {
    const empty = join(dir, 'empty');
    writeFileSync(empty, '# nothing\n');
    expect(frequentTcpPorts([join(dir, 'missing'), dir, empty])).toEqual({ ports: BUILTIN_FREQUENT_PORTS, source: 'builtin' });
  });

  it('looks in NMAPDIR, beside NETWARDEN_NMAP_PATH, then the usual places', () => {
    expect(nmapServicesCandidates({ NMAPDIR: '/opt/nmap/data', NETWARDEN_NMAP_PATH: '/opt/nmap/bin/nmap' }).slice(0, 3)).toEqual([
      '/opt/nmap/data/nmap-services',
      '/opt/nmap/share/nmap/nmap-services',
      '/usr/share/nmap/nmap-services',
    ]);
    // A bare command name says nothing about where nmap lives.
    expect(nmapServicesCandidates({ NETWARDEN_NMAP_PATH: 'nmap' })[0]).toBe('/usr/share/nmap/nmap-services');
  });

  it.runIf(existsSync('/usr/share/nmap/nmap-services'))('ranks the installed nmap-services with 8080 and 3389 among the first hundred', () => {
    const { ports, source } = frequentTcpPorts(['/usr/share/nmap/nmap-services']);
    expect(source).toBe('/usr/share/nmap/nmap-services');
    expect(ports[0]).toBe(80);
    expect(ports.slice(0, 100)).toEqual(expect.arrayContaining([8080, 3389, 5900]));
  });
});
