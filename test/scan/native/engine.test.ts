/**
 * The native engine against real sockets. Network-safety rule: only 127.0.0.0/8 is ever probed;
 * every listener binds to a 127.x address on a port the OS chooses. On loopback every address
 * answers (RST), so nothing here asserts that a host is down.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NativeEngine, type NativeEngineOptions } from '../../../src/engines/native/engine.js';
import { ScanAbortedError, type DiscoveryRequest, type EngineProgress, type PortScanRequest } from '../../../src/engines/types.js';
import { type ScannedHost } from '../../../src/core/model.js';
import {
  greetingServer,
  httpServer,
  httpsServer,
  listeningPorts,
  makeSelfSignedCert,
  mysqlServer,
  silentServer,
  unansweringPort,
  type Listener,
} from './listeners.js';

const ARP_HEADER = 'IP address       HW type     Flags       HW address            Mask     Device\n';

function discoveryRequest(overrides: Partial<DiscoveryRequest> = {}): DiscoveryRequest {
  return {
    cidr: '127.0.0.2/31',
    exclude: [],
    privileged: false,
    resolveHostnames: false,
    hostTimeoutSeconds: 300,
    signal: new AbortController().signal,
    onProgress: () => {},
    ...overrides,
  };
}

function portRequest(overrides: Partial<PortScanRequest> = {}): PortScanRequest {
  return {
    hosts: ['127.0.0.2'],
    profile: 'normal',
    ports: '1-1000',
    privileged: false,
    osDetection: false,
    resolveHostnames: false,
    hostTimeoutSeconds: 300,
    signal: new AbortController().signal,
    onProgress: () => {},
    ...overrides,
  };
}

async function freePort(host: string): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let arpDir: string;
let emptyArp: string;

beforeAll(async () => {
  arpDir = await mkdtemp(join(tmpdir(), 'netwarden-native-engine-'));
  emptyArp = join(arpDir, 'empty');
  await writeFile(emptyArp, ARP_HEADER);
});

afterAll(async () => {
  await rm(arpDir, { recursive: true, force: true });
});

/** An engine reading a neighbour table of our own, so the host's real table cannot interfere. */
function engine(options: NativeEngineOptions = {}): NativeEngine {
  return new NativeEngine({ neighbourTablePath: emptyArp, progressIntervalMs: 0, ...options });
}

describe('NativeEngine.discover', () => {
  it('is the native engine', () => {
    expect(new NativeEngine().name).toBe('native');
  });

  it('finds the loopback hosts of a /31 and reports progress', async () => {
    const progress: EngineProgress[] = [];
    const hosts = await engine().discover(discoveryRequest({ onProgress: (p) => progress.push(p) }));
    expect(hosts.map((h) => h.ip).sort()).toEqual(['127.0.0.2', '127.0.0.3']);
    for (const h of hosts) expect(h).toMatchObject({ mac: null, vendor: null, hostname: null });
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.every((p) => p.phase === 'discovery')).toBe(true);
    expect(progress[0]).toMatchObject({ percent: 0, hostsTotal: 2, hostsDone: 0, hostsFound: 0 });
    expect(progress[progress.length - 1]).toMatchObject({ percent: 100, hostsTotal: 2, hostsDone: 2, hostsFound: 2 });
  });

  it('leaves excluded addresses alone', async () => {
    const hosts = await engine().discover(discoveryRequest({ cidr: '127.0.0.0/29', exclude: ['127.0.0.1/32', '127.0.0.4/30'] }));
    expect(hosts.map((h) => h.ip)).toEqual(['127.0.0.2', '127.0.0.3']);
  });

  it('attaches MAC and vendor from the neighbour table', async () => {
    const table = join(arpDir, 'with-mac');
    await writeFile(
      table,
      `${ARP_HEADER}127.0.0.2        0x1         0x2         b8:27:eb:12:34:56     *        lo\n127.0.0.3        0x1         0x2         3a:11:22:33:44:55     *        lo\n`,
    );
    const hosts = await engine({ neighbourTablePath: table }).discover(discoveryRequest());
    const byIp = new Map(hosts.map((h) => [h.ip, h]));
    expect(byIp.get('127.0.0.2')).toMatchObject({ mac: 'B8:27:EB:12:34:56', vendor: 'Raspberry Pi Foundation' });
    // A locally administered (randomised) MAC has no vendor.
    expect(byIp.get('127.0.0.3')).toMatchObject({ mac: '3A:11:22:33:44:55', vendor: null });
  });

  it('counts a host that answered ARP as up even when every probed port is silent', async () => {
    const hold = await unansweringPort('127.0.0.7');
    if (!hold) {
      console.warn('SKIPPED: python3 is not installed, no unanswering loopback port for the ARP-only test');
      return;
    }
    try {
      const table = join(arpDir, 'appears');
      await writeFile(table, ARP_HEADER);
      const e = engine({ neighbourTablePath: table, discoveryPorts: [hold.port], neighbourPollMs: 50, discoveryTimeoutMs: 20_000 });
      // The entry appears while the probe is in flight, as when the host answers the kernel's ARP request.
      setTimeout(() => void writeFile(table, `${ARP_HEADER}127.0.0.7        0x1         0x2         dc:a6:32:00:00:07     *        lo\n`), 300);
      const started = performance.now();
      const hosts = await e.discover(discoveryRequest({ cidr: '127.0.0.7/32' }));
      expect(hosts).toEqual([{ ip: '127.0.0.7', mac: 'DC:A6:32:00:00:07', vendor: 'Raspberry Pi Trading Ltd', hostname: null }]);
      // Found through the table, long before the 20 s probe timeout ran out (a generous bound for a busy machine).
      expect(performance.now() - started).toBeLessThan(10_000);

      // An entry that was already there (possibly stale) counts only after the kernel had time to re-validate it…
      const stale = join(arpDir, 'stale');
      await writeFile(stale, `${ARP_HEADER}127.0.0.7        0x1         0x2         dc:a6:32:00:00:07     *        lo\n`);
      const kept = await engine({
        neighbourTablePath: stale,
        discoveryPorts: [hold.port],
        discoveryTimeoutMs: 200,
        staleNeighbourVerifyMs: 600,
      }).discover(discoveryRequest({ cidr: '127.0.0.7/32' }));
      expect(kept.map((h) => h.ip)).toEqual(['127.0.0.7']);
      // …and not when the kernel dropped it meanwhile (the host is gone).
      setTimeout(() => void writeFile(stale, `${ARP_HEADER}127.0.0.7        0x1         0x0         00:00:00:00:00:00     *        lo\n`), 300);
      const gone = await engine({
        neighbourTablePath: stale,
        discoveryPorts: [hold.port],
        discoveryTimeoutMs: 200,
        staleNeighbourVerifyMs: 600,
      }).discover(discoveryRequest({ cidr: '127.0.0.7/32' }));
      expect(gone).toEqual([]);
    } finally {
      await hold.close();
    }
  });

  describe('neighbour entries older than the scan (hosts that left, moved or swapped addresses)', () => {
    const line = (ip: string, mac: string, flags = '0x2') => `${ip.padEnd(17)}0x1         ${flags}         ${mac.toLowerCase()}     *        lo\n`;
    const status = (ip: string, confirmedSecondsAgo: number, state = 'REACHABLE') => new Map([[ip, { ip, states: [state], confirmedSecondsAgo }]]);
    const MAC_A = 'DC:A6:32:00:00:07';
    const MAC_B = 'B8:27:EB:00:00:08';
    let hold: Awaited<ReturnType<typeof unansweringPort>>;

    beforeAll(async () => {
      hold = await unansweringPort('127.0.0.7');
      if (!hold) console.warn('SKIPPED: python3 is not installed, no unanswering loopback port for the neighbour-entry tests');
    });
    afterAll(async () => {
      await hold?.close();
    });

    it('without iproute2, drops the old address of a MAC that answered a probe elsewhere (a host that moved)', async () => {
      if (!hold) return;
      // 127.0.0.6 answers (a refusal); 127.0.0.7 only has its old entry, with the same MAC.
      const table = join(arpDir, 'moved');
      await writeFile(table, ARP_HEADER + line('127.0.0.6', MAC_A) + line('127.0.0.7', MAC_A));
      const options = {
        neighbourTablePath: table,
        discoveryPorts: [hold.port],
        discoveryTimeoutMs: 200,
        staleNeighbourVerifyMs: 400,
        neighbourRevalidatePollMs: 100,
      };
      const hosts = await engine({ ...options, neighbourStatus: async () => null }).discover(discoveryRequest({ cidr: '127.0.0.6/31' }));
      expect(hosts.map((h) => [h.ip, h.mac])).toEqual([['127.0.0.6', MAC_A]]);

      // With another MAC the old entry is all there is to go by: counted once it survived.
      await writeFile(table, ARP_HEADER + line('127.0.0.6', MAC_A) + line('127.0.0.7', MAC_B));
      const both = await engine({ ...options, neighbourStatus: async () => null }).discover(discoveryRequest({ cidr: '127.0.0.6/31' }));
      expect(both.map((h) => [h.ip, h.mac])).toEqual([
        ['127.0.0.6', MAC_A],
        ['127.0.0.7', MAC_B],
      ]);
    });

    it('with iproute2, counts an old entry only when the kernel confirmed it again after the first probe', async () => {
      if (!hold) return;
      const table = join(arpDir, 'confirmed');
      await writeFile(table, ARP_HEADER + line('127.0.0.7', MAC_A));
      const options = { neighbourTablePath: table, discoveryPorts: [hold.port], discoveryTimeoutMs: 200, neighbourRevalidatePollMs: 100 };

      // Still REACHABLE from before the scan, never confirmed since: a leftover, not proof (down once the time allowed ran out).
      const leftover = await engine({ ...options, neighbourRevalidateMaxMs: 1500, neighbourStatus: async () => status('127.0.0.7', 40) }).discover(
        discoveryRequest({ cidr: '127.0.0.7/32' }),
      );
      expect(leftover).toEqual([]);

      // Confirmed anew (an ARP reply) a while after the first probe: up.
      const t0 = performance.now();
      const fresh = async () => status('127.0.0.7', performance.now() - t0 > 1500 ? 0 : 40);
      const alive = await engine({ ...options, neighbourRevalidateMaxMs: 10_000, neighbourStatus: fresh }).discover(
        discoveryRequest({ cidr: '127.0.0.7/32' }),
      );
      expect(alive.map((h) => [h.ip, h.mac])).toEqual([['127.0.0.7', MAC_A]]);

      // A configured (permanent) entry proves nothing.
      const permanent = await engine({ ...options, neighbourStatus: async () => status('127.0.0.7', 0, 'PERMANENT') }).discover(
        discoveryRequest({ cidr: '127.0.0.7/32' }),
      );
      expect(permanent).toEqual([]);
    });

    it('counts a host whose ARP answer came after its probes gave up (a host that just joined), and waits no longer than needed', async () => {
      if (!hold) return;
      const table = join(arpDir, 'late');
      const options = { neighbourTablePath: table, discoveryPorts: [hold.port], discoveryTimeoutMs: 200, neighbourPollMs: 50 };
      const incomplete = async () => status('127.0.0.7', 0, 'INCOMPLETE');

      // The kernel is still resolving the address when the only probe times out; the answer comes 700 ms later.
      await writeFile(table, ARP_HEADER);
      setTimeout(() => void writeFile(table, ARP_HEADER + line('127.0.0.7', MAC_A)), 900);
      const late = await engine({ ...options, neighbourStatus: incomplete }).discover(discoveryRequest({ cidr: '127.0.0.7/32' }));
      expect(late.map((h) => [h.ip, h.mac])).toEqual([['127.0.0.7', MAC_A]]);

      // Without iproute2 the same late answer counts within the resolution window.
      await writeFile(table, ARP_HEADER);
      setTimeout(() => void writeFile(table, ARP_HEADER + line('127.0.0.7', MAC_A)), 900);
      const blind = await engine({ ...options, neighbourStatus: async () => null }).discover(discoveryRequest({ cidr: '127.0.0.7/32' }));
      expect(blind.map((h) => [h.ip, h.mac])).toEqual([['127.0.0.7', MAC_A]]);

      // An answer after the window does not count: the host did not answer the kernel's requests.
      await writeFile(table, ARP_HEADER);
      const timer = setTimeout(() => void writeFile(table, ARP_HEADER + line('127.0.0.7', MAC_A)), 1500);
      const missed = await engine({ ...options, neighbourResolveWaitMs: 600, neighbourStatus: incomplete }).discover(
        discoveryRequest({ cidr: '127.0.0.7/32' }),
      );
      clearTimeout(timer);
      expect(missed).toEqual([]);

      // Resolution already failed (nobody there): no waiting for an answer that cannot come.
      await writeFile(table, ARP_HEADER);
      const started = performance.now();
      const failed = await engine({
        ...options,
        neighbourResolveWaitMs: 60_000,
        neighbourStatus: async () => status('127.0.0.7', 0, 'FAILED'),
      }).discover(discoveryRequest({ cidr: '127.0.0.7/32' }));
      expect(failed).toEqual([]);
      expect(performance.now() - started).toBeLessThan(30_000);
    });

    it('after the kernel dropped an old entry, whoever answers the fresh resolution is the host there (swapped addresses)', async () => {
      if (!hold) return;
      const table = join(arpDir, 'swapped');
      await writeFile(table, ARP_HEADER + line('127.0.0.7', MAC_A));
      const options = { neighbourTablePath: table, discoveryPorts: [hold.port], discoveryTimeoutMs: 200, neighbourRevalidatePollMs: 200 };
      // The old entry fails, then the address resolves to another MAC.
      setTimeout(() => void writeFile(table, ARP_HEADER + line('127.0.0.7', '00:00:00:00:00:00', '0x0')), 300);
      setTimeout(() => void writeFile(table, ARP_HEADER + line('127.0.0.7', MAC_B)), 700);
      const hosts = await engine({ ...options, neighbourStatus: async () => status('127.0.0.7', 40) }).discover(
        discoveryRequest({ cidr: '127.0.0.7/32' }),
      );
      expect(hosts.map((h) => [h.ip, h.mac])).toEqual([['127.0.0.7', MAC_B]]);

      // Nobody answers the fresh resolution: down.
      await writeFile(table, ARP_HEADER + line('127.0.0.7', MAC_A));
      setTimeout(() => void writeFile(table, ARP_HEADER), 300);
      const gone = await engine({ ...options, neighbourStatus: async () => status('127.0.0.7', 40) }).discover(
        discoveryRequest({ cidr: '127.0.0.7/32' }),
      );
      expect(gone).toEqual([]);
    });
  });

  it('resolves hostnames only when asked', async () => {
    const asked: string[] = [];
    const reverseLookup = async (ip: string): Promise<string[]> => {
      asked.push(ip);
      return ip === '127.0.0.2' ? ['two.loopback.test.'] : [];
    };
    const without = await engine({ reverseLookup }).discover(discoveryRequest());
    expect(asked).toEqual([]);
    expect(without.every((h) => h.hostname === null)).toBe(true);
    const withNames = await engine({ reverseLookup }).discover(discoveryRequest({ resolveHostnames: true }));
    expect(asked.sort()).toEqual(['127.0.0.2', '127.0.0.3']);
    expect(withNames.find((h) => h.ip === '127.0.0.2')?.hostname).toBe('two.loopback.test');
    expect(withNames.find((h) => h.ip === '127.0.0.3')?.hostname).toBeNull();
  });

  it('rejects with ScanAbortedError when aborted', async () => {
    const controller = new AbortController();
    const started = performance.now();
    const pending = engine({ discoveryTimeoutMs: 30_000 }).discover(discoveryRequest({ cidr: '127.1.0.0/16', signal: controller.signal }));
    setTimeout(() => controller.abort(), 100);
    await expect(pending).rejects.toBeInstanceOf(ScanAbortedError);
    // Well before the 30 s probe timeout: the abort ended the wait.
    expect(performance.now() - started).toBeLessThan(10_000);
    const already = new AbortController();
    already.abort();
    await expect(engine().discover(discoveryRequest({ signal: already.signal }))).rejects.toBeInstanceOf(ScanAbortedError);
  });
});

describe('NativeEngine.scanPorts', () => {
  const listeners: Listener[] = [];
  let ssh: Listener;
  let web: Listener;
  let ftp: Listener;
  let mysql: Listener;
  let silent: Listener;
  let tls: Listener | null = null;
  let closedPorts: number[];

  beforeAll(async () => {
    ssh = await greetingServer('127.0.0.2', 'SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n');
    web = await httpServer('127.0.0.2', 'nginx/1.18.0');
    ftp = await greetingServer('127.0.0.3', '220 (vsFTPd 2.3.4)\r\n');
    mysql = await mysqlServer('127.0.0.3', '8.0.36');
    silent = await silentServer('127.0.0.3');
    listeners.push(ssh, web, ftp, mysql, silent);
    const cert = await makeSelfSignedCert('netwarden.test', 'DNS:netwarden.test,IP:127.0.0.3');
    if (cert) {
      tls = await httpsServer('127.0.0.3', cert, 'Apache/2.4.57 (Debian)');
      listeners.push(tls);
    }
    closedPorts = [await freePort('127.0.0.2'), await freePort('127.0.0.3'), await freePort('127.0.0.2')];
  });

  afterAll(async () => {
    await Promise.all(listeners.map((l) => l.close()));
  });

  function portList(): string {
    return [...listeners.map((l) => l.port), ...closedPorts].join(',');
  }

  let result: ScannedHost[];
  const progress: EngineProgress[] = [];

  it('finds exactly the listening ports of each host, with services, products, versions and CPEs', async () => {
    result = await engine().scanPorts(portRequest({ hosts: ['127.0.0.2', '127.0.0.3'], ports: portList(), onProgress: (p) => progress.push(p) }));
    const byIp = new Map(result.map((h) => [h.ip, h]));
    expect([...byIp.keys()].sort()).toEqual(['127.0.0.2', '127.0.0.3']);

    const two = byIp.get('127.0.0.2') as ScannedHost;
    expect(two).toMatchObject({ mac: null, vendor: null, hostname: null, os_name: null, device_type: null });
    expect(two.ports.map((p) => p.port)).toEqual([ssh.port, web.port].sort((a, b) => a - b));
    expect(two.ports.find((p) => p.port === ssh.port)).toEqual({
      port: ssh.port,
      protocol: 'tcp',
      state: 'open',
      service: 'ssh',
      product: 'OpenSSH',
      version: '9.2p1',
      extra_info: 'Debian 2+deb12u3; protocol 2.0',
      cpe: ['cpe:/a:openbsd:openssh:9.2p1', 'cpe:/o:debian:debian_linux'],
    });
    expect(two.ports.find((p) => p.port === web.port)).toEqual({
      port: web.port,
      protocol: 'tcp',
      state: 'open',
      service: 'http',
      product: 'nginx',
      version: '1.18.0',
      extra_info: null,
      cpe: ['cpe:/a:igor_sysoev:nginx:1.18.0'],
    });

    const three = byIp.get('127.0.0.3') as ScannedHost;
    const expectedThree = [ftp.port, mysql.port, silent.port, ...(tls ? [tls.port] : [])].sort((a, b) => a - b);
    expect(three.ports.map((p) => p.port)).toEqual(expectedThree);
    expect(three.ports.every((p) => p.state === 'open' && p.protocol === 'tcp')).toBe(true);
    expect(three.ports.find((p) => p.port === ftp.port)).toMatchObject({
      service: 'ftp',
      product: 'vsftpd',
      version: '2.3.4',
      cpe: ['cpe:/a:vsftpd:vsftpd:2.3.4'],
    });
    expect(three.ports.find((p) => p.port === mysql.port)).toMatchObject({
      service: 'mysql',
      product: 'MySQL',
      version: '8.0.36',
      cpe: ['cpe:/a:mysql:mysql:8.0.36'],
    });
    expect(three.ports.find((p) => p.port === silent.port)).toMatchObject({ service: null, product: null, version: null, cpe: [] });
  });

  it('reads TLS certificates and the Server header inside TLS', () => {
    if (!tls) {
      console.warn('SKIPPED: openssl CLI is not installed, cannot make a test certificate for the TLS banner test');
      return;
    }
    const port = result.find((h) => h.ip === '127.0.0.3')?.ports.find((p) => p.port === tls?.port);
    expect(port).toEqual({
      port: tls.port,
      protocol: 'tcp',
      state: 'open',
      service: 'https',
      product: 'Apache httpd',
      version: '2.4.57',
      extra_info: 'Debian; cert CN=netwarden.test; SAN=DNS:netwarden.test, IP:127.0.0.3',
      cpe: ['cpe:/a:apache:http_server:2.4.57'],
    });
  });

  it('reported progress through the ports and services phases', () => {
    const phases = [...new Set(progress.map((p) => p.phase))];
    expect(phases).toEqual(['ports', 'services']);
    const ports = progress.filter((p) => p.phase === 'ports');
    expect(ports[0]).toMatchObject({ percent: 0, hostsTotal: 2 });
    // A host is done once its services are read too: both have open ports, so none is done after the port scan.
    expect(ports[ports.length - 1]).toMatchObject({ percent: 100, hostsDone: 0 });
    const done = progress.map((p) => p.hostsDone).filter((d) => d !== undefined);
    expect(done, 'hosts done never goes back').toEqual([...done].sort((a, b) => a - b));
    for (let i = 1; i < ports.length; i++) expect(ports[i].percent).toBeGreaterThanOrEqual(ports[i - 1].percent);
    const services = progress.filter((p) => p.phase === 'services');
    expect(services[services.length - 1]).toMatchObject({ percent: 100, hostsDone: 2 });
  });

  it('lists a few filtered ports, as nmap does, but not many', async () => {
    const hold = await unansweringPort('127.0.0.8');
    if (!hold) {
      console.warn('SKIPPED: python3 is not installed, no unanswering loopback port for the filtered-port test');
      return;
    }
    try {
      const closed = await freePort('127.0.0.8');
      const [host] = await engine().scanPorts(portRequest({ hosts: ['127.0.0.8'], ports: `${closed},${hold.port}` }));
      expect(host.ports).toEqual([
        { port: hold.port, protocol: 'tcp', state: 'filtered', service: null, product: null, version: null, extra_info: null, cpe: [] },
      ]);
      const [limited] = await engine({ filteredReportLimit: 0 }).scanPorts(portRequest({ hosts: ['127.0.0.8'], ports: `${closed},${hold.port}` }));
      expect(limited.ports).toEqual([]);
    } finally {
      await hold.close();
    }
  });

  it('carries the MAC from the neighbour table', async () => {
    const table = join(arpDir, 'scan-mac');
    await writeFile(table, `${ARP_HEADER}127.0.0.2        0x1         0x2         00:1a:11:aa:bb:cc     *        lo\n`);
    const [host] = await engine({ neighbourTablePath: table }).scanPorts(portRequest({ hosts: ['127.0.0.2'], ports: String(ssh.port) }));
    expect(host).toMatchObject({ ip: '127.0.0.2', mac: '00:1A:11:AA:BB:CC', vendor: 'Google, Inc.' });
  });

  // How fast is measured by bench/scan-bench.mjs; this checks what it reports.
  it('scans 1000 ports of a loopback host and reports no false open ports', async () => {
    const before = await listeningPorts('127.0.0.9');
    const [host] = await engine().scanPorts(portRequest({ hosts: ['127.0.0.9'], ports: '20001-21000' }));
    const after = await listeningPorts('127.0.0.9');
    for (const p of host.ports) expect(before.has(p.port) || after.has(p.port)).toBe(true);
    if (![...before].some((p) => p >= 20001 && p <= 21000)) expect(host.ports).toEqual([]);
  });

  it('rejects a bad port list', async () => {
    await expect(engine().scanPorts(portRequest({ ports: '0-99999' }))).rejects.toThrow(/Invalid port list/);
  });

  it('stops promptly with ScanAbortedError when aborted during the port scan', async () => {
    const controller = new AbortController();
    const progressSeen: EngineProgress[] = [];
    const started = performance.now();
    const pending = engine().scanPorts(
      portRequest({
        hosts: ['127.0.0.9', '127.0.0.10'],
        profile: 'intensive',
        ports: '1-65535',
        signal: controller.signal,
        onProgress: (p) => progressSeen.push(p),
      }),
    );
    setTimeout(() => controller.abort(), 200);
    await expect(pending).rejects.toBeInstanceOf(ScanAbortedError);
    // All 65,535 ports of two hosts would take far longer: the abort ended it.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(progressSeen.some((p) => p.phase === 'ports')).toBe(true);
  });

  it('stops promptly with ScanAbortedError when aborted during banner grabbing', async () => {
    const controller = new AbortController();
    let abortedAt = 0;
    const pending = engine({ bannerTimeouts: { silentMs: 30_000, responseMs: 30_000 } }).scanPorts(
      portRequest({
        hosts: ['127.0.0.3'],
        ports: String(silent.port),
        signal: controller.signal,
        onProgress: (p) => {
          if (p.phase === 'services' && abortedAt === 0) {
            setTimeout(() => {
              abortedAt = performance.now();
              controller.abort();
            }, 100);
          }
        },
      }),
    );
    await expect(pending).rejects.toBeInstanceOf(ScanAbortedError);
    expect(abortedAt).toBeGreaterThan(0);
    // Well before the 30 s banner timeouts: the abort ended the wait.
    expect(performance.now() - abortedAt).toBeLessThan(10_000);
  });
});
