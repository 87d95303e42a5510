/**
 * Each name source against a local fake that speaks its real API (auth included): what it yields,
 * that it closes its session, and that a wrong password, a source that is down, one that hangs
 * and one that answers garbage each end as a warning naming the source, never as an error.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSettings, type Settings } from '../../src/core/settings.js';
import { fetchAdGuard } from '../../src/names/adguard.js';
import { readLeaseFile } from '../../src/names/lease-file.js';
import { lookupNames as lookupNamesWith, NameLookup, type LookupOptions } from '../../src/names/lookup.js';
import { OutboundGuard } from '../../src/util/outbound.js';
import { fetchPihole } from '../../src/names/pihole.js';
import { fetchUnifi, fetchUnifiNetwork } from '../../src/names/unifi.js';
import { closedPort } from '../helpers/listeners.js';
import { startFakeAdGuard, startFakePihole, startFakeUnifi, type Fake, type FakePihole } from '../helpers/name-source-fakes.js';

// The allowance the test servers get (NETWARDEN_OUTBOUND_ALLOW: loopback): the fakes listen there.
const guard = OutboundGuard.fromEnvironment(process.env);
const ctx = () => ({ signal: new AbortController().signal, timeoutMs: 5_000, guard });
const lookupNames = (s: Settings['name_sources'], options: LookupOptions = {}) => lookupNamesWith(s, { guard, ...options });

function sources(patch: Partial<{ [K in keyof Settings['name_sources']]: Partial<Settings['name_sources'][K]> }>): Settings['name_sources'] {
  const s = defaultSettings().name_sources;
  return {
    pihole: { ...s.pihole, ...patch.pihole },
    adguard: { ...s.adguard, ...patch.adguard },
    unifi: { ...s.unifi, ...patch.unifi },
    dhcp_leases: { ...s.dhcp_leases, ...patch.dhcp_leases },
  };
}

describe('Pi-hole v6', () => {
  let pihole: FakePihole;
  beforeAll(async () => {
    pihole = await startFakePihole({ password: 'app-pw' });
  });
  afterAll(() => pihole.close());

  it('logs in with the app password, reads leases and network devices, and closes its session', async () => {
    const records = await fetchPihole({ url: pihole.url, password: 'app-pw' }, ctx());
    expect(records).toEqual(
      expect.arrayContaining([
        { ip: '127.0.0.1', mac: 'b8:27:eb:12:34:56', hostname: 'raspberrypi', source: 'pihole' },
        { ip: '192.168.2.111', mac: '3c:22:fb:aa:bb:cc', hostname: 'annas-macbook.lan', source: 'pihole' },
        { ip: '192.168.2.50', mac: 'ip-192.168.2.50', hostname: 'routed-nas.lan', source: 'pihole' },
      ]),
    );
    expect(pihole.requests.map((r) => `${r.method} ${r.path.split('?')[0]}`)).toEqual(
      expect.arrayContaining(['POST /api/auth', 'GET /api/dhcp/leases', 'GET /api/network/devices', 'DELETE /api/auth']),
    );
    expect(pihole.openSessions.size).toBe(0);
  });

  it('reduced by the lookup: pseudo MACs and "*" names dropped, leases first', async () => {
    const { records, warnings } = await lookupNames(sources({ pihole: { enabled: true, url: pihole.url, password: 'app-pw' } }));
    expect(warnings).toEqual([]);
    expect(records).toEqual([
      { ip: '127.0.0.1', mac: 'B8:27:EB:12:34:56', hostname: 'raspberrypi', source: 'pihole' },
      { ip: '192.168.2.111', mac: '3C:22:FB:AA:BB:CC', hostname: 'annas-macbook.lan', source: 'pihole' },
      { ip: '192.168.2.50', mac: null, hostname: 'routed-nas.lan', source: 'pihole' },
    ]);
  });

  it('a wrong password is a warning that says so', async () => {
    const { records, warnings } = await lookupNames(sources({ pihole: { enabled: true, url: pihole.url, password: 'wrong' } }));
    expect(records).toEqual([]);
    expect(warnings).toEqual([`name source Pi-hole (${pihole.url}): login (POST /api/auth): refused (HTTP 401); check the credentials`]);
  });
});

describe('AdGuard Home', () => {
  let adguard: Fake;
  beforeAll(async () => {
    adguard = await startFakeAdGuard({ username: 'admin', password: 'ag-pw' });
  });
  afterAll(() => adguard.close());

  it('reads persistent clients (a MAC-only client gets its lease address), auto clients and both lease lists', async () => {
    const { records, warnings } = await lookupNames(sources({ adguard: { enabled: true, url: adguard.url, username: 'admin', password: 'ag-pw' } }));
    expect(warnings).toEqual([]);
    expect(records).toEqual([
      { ip: '192.168.3.101', mac: '18:C0:4D:01:02:03', hostname: 'Living room TV', source: 'adguard' },
      { ip: '192.168.3.20', mac: null, hostname: 'Work laptop', source: 'adguard' },
      { ip: '192.168.3.10', mac: '00:11:32:0A:0B:0C', hostname: 'nas', source: 'adguard' },
      { ip: '192.168.3.102', mac: 'A4:83:E7:00:00:11', hostname: 'annas-iphone', source: 'adguard' },
      { ip: '192.168.3.30', mac: null, hostname: 'printer.lan', source: 'adguard' },
    ]);
    expect(adguard.requests.every((r) => r.headers.authorization === `Basic ${Buffer.from('admin:ag-pw').toString('base64')}`)).toBe(true);
  });

  it('without the right credentials: a warning', async () => {
    await expect(fetchAdGuard({ url: adguard.url, username: 'admin', password: 'nope' }, ctx())).rejects.toThrow(
      'clients (GET /control/clients): refused (HTTP 401); check the credentials',
    );
  });
});

describe.each([false, true])('UniFi Network controller (UniFi OS: %s)', (unifiOs) => {
  let unifi: Fake & { loggedOut: number };
  beforeAll(async () => {
    unifi = await startFakeUnifi({ username: 'netwarden', password: 'u-pw', site: 'home', unifiOs });
  });
  afterAll(() => unifi.close());
  const config = (patch: Partial<Settings['name_sources']['unifi']> = {}) => ({
    ...defaultSettings().name_sources.unifi,
    enabled: true,
    url: unifi.url,
    username: 'netwarden',
    password: 'u-pw',
    site: 'home',
    unifi_os: unifiOs,
    ...patch,
  });

  it("logs in, reads the site's clients (the alias wins over the hostname) and logs out", async () => {
    const records = await fetchUnifi(config(), ctx());
    expect(records).toEqual([
      { ip: '192.168.4.21', mac: '9c:b6:d0:01:02:03', hostname: 'Office PC', source: 'unifi' },
      { ip: '192.168.4.40', mac: 'f0:9f:c2:00:00:12', hostname: 'camera-garden', source: 'unifi' },
    ]);
    expect(unifi.loggedOut).toBe(1);
  });

  it("gives which access point or switch port each client hangs off, and the devices' uplinks, from one session", async () => {
    const before = unifi.loggedOut;
    const { records, links } = await fetchUnifiNetwork(config(), ctx());
    expect(records).toHaveLength(2);
    expect(links).toEqual([
      {
        mac: '9C:B6:D0:01:02:03',
        ip: '192.168.4.21',
        parentMac: '80:2A:A8:00:00:01',
        parentIp: '192.168.4.2',
        parentKind: 'access_point',
        via: 'wifi',
        port: null,
        source: 'unifi',
      },
      {
        mac: 'F0:9F:C2:00:00:12',
        ip: '192.168.4.40',
        parentMac: '80:2A:A8:00:00:02',
        parentIp: '192.168.4.3',
        parentKind: 'switch',
        via: 'l2',
        port: '7',
        source: 'unifi',
      },
      {
        mac: '80:2A:A8:00:00:01',
        ip: '192.168.4.2',
        parentMac: '80:2A:A8:00:00:02',
        parentIp: '192.168.4.3',
        parentKind: 'switch',
        via: 'l2',
        port: '3',
        source: 'unifi',
      },
    ]);
    expect(unifi.loggedOut).toBe(before + 1);
    const looked = await lookupNames(sources({ unifi: config() }));
    expect(looked).toMatchObject({ linkSources: ['unifi'], links });
  });

  it('an unknown site and a wrong password are warnings naming the problem', async () => {
    const site = await lookupNames(sources({ unifi: config({ site: 'office' }) }));
    expect(site.warnings).toEqual([`name source UniFi (${unifi.url}, site office): clients: the controller has no site "office"`]);
    const login = await lookupNames(sources({ unifi: config({ password: 'bad' }) }));
    expect(login.warnings[0]).toMatch(/^name source UniFi .*: login \(POST \/api\/(auth\/)?login\): HTTP 400$/);
    // A source that failed states no links: the stored ones stay as they were.
    expect(login).toMatchObject({ links: [], linkSources: [] });
  });
});

describe('DHCP lease file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'netwarden-leases-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('reads the file at the path in any of the three formats', async () => {
    const path = join(dir, 'dnsmasq.leases');
    await writeFile(path, '1764154800 3c:22:fb:11:22:33 192.168.1.23 macbook-air *\n');
    expect(await readLeaseFile({ path, format: 'auto' }, ctx())).toEqual([
      { ip: '192.168.1.23', mac: '3C:22:FB:11:22:33', hostname: 'macbook-air', source: 'dhcp_leases' },
    ]);
    const kea = join(dir, 'kea-leases4.csv');
    await writeFile(
      kea,
      'address,hwaddr,client_id,valid_lifetime,expire,subnet_id,fqdn_fwd,fqdn_rev,hostname,state,user_context\n10.1.1.5,00:16:3e:01:02:03,,3600,1764160000,1,0,0,vm5,0,\n',
    );
    expect(await readLeaseFile({ path: kea, format: 'kea' }, ctx())).toEqual([
      { ip: '10.1.1.5', mac: '00:16:3E:01:02:03', hostname: 'vm5', source: 'dhcp_leases' },
    ]);
  });

  it('a missing file, a directory and a file in no lease format are the same warning', async () => {
    const garbage = join(dir, 'garbage.leases');
    await writeFile(garbage, '<html>not leases</html>\n'.repeat(50));
    // One message whatever the cause: it must not tell which paths exist or how long a file is.
    const same = 'not a readable dnsmasq, ISC dhcpd or Kea lease file (check the path, the format and that this service may read it)';
    for (const path of [join(dir, 'missing.leases'), dir, garbage]) {
      const { warnings } = await lookupNames(sources({ dhcp_leases: { enabled: true, path } }));
      expect(warnings, path).toEqual([`name source DHCP lease file (${path}): ${same}`]);
    }
  });
});

describe('a source that is down, slow or answers garbage never fails the lookup', () => {
  let pihole: FakePihole;
  beforeAll(async () => {
    pihole = await startFakePihole({ password: 'pw' });
  });
  afterAll(() => pihole.close());

  it('down: connection refused', async () => {
    const url = `http://127.0.0.1:${await closedPort('127.0.0.1')}`;
    const { records, warnings } = await lookupNames(sources({ pihole: { enabled: true, url, password: 'pw' } }));
    expect(records).toEqual([]);
    expect(warnings).toEqual([`name source Pi-hole (${url}): connection failed: ECONNREFUSED`]);
  });

  it('slow: no answer within the time allowed; the other sources still count', async () => {
    pihole.mode = 'hang';
    const adguard = await startFakeAdGuard({ username: 'a', password: 'b' });
    try {
      const { records, warnings } = await lookupNames(
        sources({
          pihole: { enabled: true, url: pihole.url, password: 'pw' },
          adguard: { enabled: true, url: adguard.url, username: 'a', password: 'b' },
        }),
        { timeoutMs: 300 },
      );
      expect(warnings).toEqual([`name source Pi-hole (${pihole.url}): no answer within 0.3 s`]);
      expect(records.length).toBeGreaterThan(0);
      expect(records.every((r) => r.source === 'adguard')).toBe(true);
    } finally {
      pihole.mode = 'ok';
      await adguard.close();
    }
  });

  it('garbage: an HTML page where JSON belongs', async () => {
    pihole.mode = 'garbage';
    try {
      const { warnings } = await lookupNames(sources({ pihole: { enabled: true, url: pihole.url, password: 'pw' } }));
      expect(warnings).toEqual([`name source Pi-hole (${pihole.url}): login (POST /api/auth): the answer is not JSON`]);
    } finally {
      pihole.mode = 'ok';
    }
  });

  it('the scan ending stops the lookup; warnings are handed out once', async () => {
    pihole.mode = 'hang';
    const stop = new AbortController();
    try {
      const lookup = NameLookup.start(sources({ pihole: { enabled: true, url: pihole.url, password: 'pw' } }), {
        signal: stop.signal,
        timeoutMs: 60_000,
        guard,
      });
      stop.abort();
      const first = await lookup.apply([{ ip: '127.0.0.1', mac: null, vendor: null, hostname: null }]);
      expect(first.warnings).toEqual([`name source Pi-hole (${pihole.url}): stopped: the scan ended`]);
      expect(first.hosts).toEqual([{ ip: '127.0.0.1', mac: null, vendor: null, hostname: null }]);
      expect((await lookup.apply([])).warnings).toEqual([]);
    } finally {
      pihole.mode = 'ok';
    }
  });

  it('nothing enabled: nothing asked', async () => {
    expect(await lookupNames(defaultSettings().name_sources)).toEqual({ records: [], links: [], linkSources: [], warnings: [] });
  });
});
