/**
 * Pi-hole v6 (FTL's REST API): the app password buys a session (`POST /api/auth` →
 * `session.sid`), sent as `X-FTL-SID`; names come from the DHCP leases (`GET /api/dhcp/leases`:
 * `leases[] {ip, name, hwaddr}`) and the network table (`GET /api/network/devices`:
 * `devices[] {hwaddr, ips[] {ip, name}}`). The session is closed afterwards (`DELETE /api/auth`):
 * Pi-hole allows only a few at once. A Pi-hole without a password needs no session.
 */
import type { Settings } from '../core/settings.js';
import { isObject } from '../util/is-object.js';
import { jsonOf, NameSourceError, request, under } from './http.js';
import type { NameRecord, SourceContext } from './types.js';

type Config = Pick<Settings['name_sources']['pihole'], 'url' | 'password'>;

/** Devices and addresses asked of the network table (Pi-hole's defaults are 10 and 3). */
const MAX_DEVICES = 10_000;
const MAX_ADDRESSES = 20;

export async function fetchPihole(config: Config, ctx: SourceContext): Promise<NameRecord[]> {
  const sid = config.password ? await login(config, ctx) : null;
  const headers: Record<string, string> = sid ? { 'X-FTL-SID': sid } : {};
  try {
    const [leases, devices] = await Promise.all([
      request(under(config.url, '/api/dhcp/leases'), { ...ctx, headers }).then((r) => jsonOf(r, 'DHCP leases (GET /api/dhcp/leases)')),
      request(under(config.url, `/api/network/devices?max_devices=${MAX_DEVICES}&max_addresses=${MAX_ADDRESSES}`), { ...ctx, headers }).then((r) =>
        jsonOf(r, 'network devices (GET /api/network/devices)'),
      ),
    ]);
    if (!isObject(leases) || !Array.isArray(leases.leases))
      throw new NameSourceError('DHCP leases: the answer has no "leases" list (is this Pi-hole v6?)');
    if (!isObject(devices) || !Array.isArray(devices.devices)) {
      throw new NameSourceError('network devices: the answer has no "devices" list (is this Pi-hole v6?)');
    }
    const records: NameRecord[] = [];
    for (const l of leases.leases) {
      if (isObject(l) && typeof l.ip === 'string') records.push({ ip: l.ip, mac: str(l.hwaddr), hostname: str(l.name), source: 'pihole' });
    }
    for (const d of devices.devices) {
      if (!isObject(d) || !Array.isArray(d.ips)) continue;
      for (const a of d.ips) {
        if (isObject(a) && typeof a.ip === 'string') records.push({ ip: a.ip, mac: str(d.hwaddr), hostname: str(a.name), source: 'pihole' });
      }
    }
    return records;
  } finally {
    if (sid) await logout(config, sid, ctx);
  }
}

async function login(config: Config, ctx: SourceContext): Promise<string | null> {
  const body = jsonOf(
    await request(under(config.url, '/api/auth'), { ...ctx, method: 'POST', json: { password: config.password } }),
    'login (POST /api/auth)',
  );
  const session = isObject(body) && isObject(body.session) ? body.session : null;
  if (!session || session.valid !== true) throw new NameSourceError('login (POST /api/auth): the password was not accepted');
  // A Pi-hole without a password answers valid with no session id: nothing to send then.
  return typeof session.sid === 'string' && session.sid !== '' ? session.sid : null;
}

async function logout(config: Config, sid: string, ctx: SourceContext): Promise<void> {
  await request(under(config.url, '/api/auth'), { ...ctx, method: 'DELETE', headers: { 'X-FTL-SID': sid } }).catch(() => undefined);
}

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
