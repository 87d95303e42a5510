/**
 * A UniFi Network controller: a session cookie from logging in with a local account, then the
 * site's connected clients (`GET /api/s/{site}/stat/sta`: `{meta: {rc}, data[] {mac, ip,
 * hostname, name, ap_mac, sw_mac, sw_port, is_wired}}`, `name` being the alias given in the
 * controller) and its own devices (`GET /api/s/{site}/stat/device`: `data[] {mac, ip, type, name,
 * uplink {uplink_mac, uplink_remote_port, type}}`, `type` `uap` an access point, `usw` a switch,
 * `udm` a console with switch ports, `ugw`/`uxg` a gateway). The clients give names and MACs; both
 * lists give the links (core/device-links.ts): a wireless client hangs off the access point
 * `ap_mac`, a wired one off port `sw_port` of `sw_mac`, a UniFi device off its `uplink`. The device
 * list is optional: a controller that refuses it still gives the clients and their links. The classic controller logs
 * in at `POST /api/login` (cookie `unifises`); UniFi OS consoles at `POST /api/auth/login`
 * (cookie `TOKEN`, plus an `X-CSRF-Token` for later POSTs) with the Network API under
 * `/proxy/network`. The session is closed afterwards.
 */
import { linkableMac, type LinkParentKind, type ObservedLink } from '../core/device-links.js';
import type { Settings } from '../core/settings.js';
import { isObject } from '../util/is-object.js';
import { jsonOf, NameSourceError, request, under, type SourceResponse } from './http.js';
import type { NameRecord, SourceContext } from './types.js';

type Config = Pick<Settings['name_sources']['unifi'], 'url' | 'username' | 'password' | 'site' | 'unifi_os' | 'verify_tls'>;

/** What the controller gives: names and MACs of its clients, and which switch or access point each hangs off. */
export interface UnifiAnswer {
  records: NameRecord[];
  links: ObservedLink[];
}

export async function fetchUnifi(config: Config, ctx: SourceContext): Promise<NameRecord[]> {
  return (await fetchUnifiNetwork(config, ctx)).records;
}

export async function fetchUnifiNetwork(config: Config, ctx: SourceContext): Promise<UnifiAnswer> {
  const opts = { ...ctx, verifyTls: config.verify_tls };
  const loginPath = config.unifi_os ? '/api/auth/login' : '/api/login';
  const login = await request(under(config.url, loginPath), {
    ...opts,
    method: 'POST',
    json: { username: config.username, password: config.password, remember: false },
  });
  jsonOf(login, `login (POST ${loginPath})`);
  const cookie = cookiesOf(login);
  if (!cookie) throw new NameSourceError(`login (POST ${loginPath}): no session cookie in the answer`);
  const csrf = typeof login.headers['x-csrf-token'] === 'string' ? login.headers['x-csrf-token'] : null;
  const headers: Record<string, string> = { Cookie: cookie, ...(csrf ? { 'X-CSRF-Token': csrf } : {}) };
  const prefix = config.unifi_os ? '/proxy/network' : '';
  const path = `${prefix}/api/s/${encodeURIComponent(config.site)}/stat/sta`;
  try {
    const res = await request(under(config.url, path), { ...opts, headers });
    const body = res.status === 400 || res.status === 404 ? safeJson(res) : jsonOf(res, `clients (GET ${path})`);
    const meta = isObject(body) && isObject(body.meta) ? body.meta : null;
    if (meta && meta.rc !== 'ok') {
      const msg = typeof meta.msg === 'string' ? meta.msg : 'error';
      throw new NameSourceError(
        msg === 'api.err.NoSiteContext'
          ? `clients: the controller has no site "${config.site}"`
          : `clients (GET ${path}): the controller answered ${msg}`,
      );
    }
    if (res.status >= 400) throw new NameSourceError(`clients (GET ${path}): HTTP ${res.status}`);
    if (!isObject(body) || !Array.isArray(body.data))
      throw new NameSourceError('clients: the answer has no "data" list (is this a UniFi Network controller?)');
    const records: NameRecord[] = [];
    for (const c of body.data) {
      if (!isObject(c) || typeof c.ip !== 'string') continue;
      const name = typeof c.name === 'string' && c.name.trim() !== '' ? c.name : typeof c.hostname === 'string' ? c.hostname : null;
      records.push({ ip: c.ip, mac: typeof c.mac === 'string' ? c.mac : null, hostname: name, source: 'unifi' });
    }
    const devicesPath = `${prefix}/api/s/${encodeURIComponent(config.site)}/stat/device`;
    const devices = await request(under(config.url, devicesPath), { ...opts, headers })
      .then((r) => (r.status === 200 ? safeJson(r) : null))
      .catch(() => null);
    const deviceList = isObject(devices) && Array.isArray(devices.data) ? devices.data.filter(isObject) : [];
    return { records, links: unifiLinks(body.data.filter(isObject), deviceList) };
  } finally {
    const logoutPath = config.unifi_os ? '/api/auth/logout' : '/api/logout';
    await request(under(config.url, logoutPath), { ...opts, method: 'POST', headers, json: {} }).catch(() => undefined);
  }
}

/** What a UniFi device type is as a parent on the map; null for a gateway (the map draws gateways itself). */
function parentKindOf(type: unknown): LinkParentKind | null {
  if (type === 'uap') return 'access_point';
  if (type === 'ugw' || type === 'uxg') return null;
  return 'switch';
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

function portText(value: unknown): string | null {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return String(value);
  const t = text(value);
  return t && t.length <= 32 ? t : null;
}

/** The links the controller's lists state (core/device-links.ts ObservedLink), by MAC. */
export function unifiLinks(clients: readonly Record<string, unknown>[], devices: readonly Record<string, unknown>[]): ObservedLink[] {
  const byMac = new Map<string, { ip: string | null; type: unknown }>();
  for (const d of devices) {
    const mac = linkableMac(text(d.mac));
    if (mac) byMac.set(mac, { ip: text(d.ip), type: d.type });
  }
  const links: ObservedLink[] = [];
  const add = (mac: string | null, ip: string | null, parentMac: string | null, wireless: boolean, port: string | null) => {
    if (!parentMac || mac === parentMac || (!mac && !ip)) return;
    const parent = byMac.get(parentMac);
    const parentKind = wireless ? 'access_point' : parent ? parentKindOf(parent.type) : 'switch';
    if (!parentKind) return;
    links.push({ mac, ip, parentMac, parentIp: parent?.ip ?? null, parentKind, via: wireless ? 'wifi' : 'l2', port, source: 'unifi' });
  };
  for (const c of clients) {
    const mac = linkableMac(text(c.mac));
    const ip = text(c.ip);
    const ap = linkableMac(text(c.ap_mac));
    const wired = c.is_wired === true || (c.is_wired === undefined && !ap);
    if (!wired && ap) add(mac, ip, ap, true, null);
    else add(mac, ip, linkableMac(text(c.sw_mac)), false, portText(c.sw_port));
  }
  for (const d of devices) {
    const uplink = isObject(d.uplink) ? d.uplink : null;
    if (!uplink) continue;
    const wireless = uplink.type === 'wireless';
    add(linkableMac(text(d.mac)), text(d.ip), linkableMac(text(uplink.uplink_mac)), wireless, wireless ? null : portText(uplink.uplink_remote_port));
  }
  return links;
}

/** The `name=value` pairs of the answer's Set-Cookie headers, as one Cookie header. */
function cookiesOf(res: SourceResponse): string {
  const set = res.headers['set-cookie'] ?? [];
  return set
    .map((c) => c.split(';')[0].trim())
    .filter((c) => c.includes('=') && !c.endsWith('='))
    .join('; ');
}

function safeJson(res: SourceResponse): unknown {
  try {
    return JSON.parse(res.text) as unknown;
  } catch {
    return null;
  }
}
