/**
 * A UniFi Network controller: a session cookie from logging in with a local account, then the
 * site's connected clients (`GET /api/s/{site}/stat/sta`: `{meta: {rc}, data[] {mac, ip,
 * hostname, name}}`, `name` being the alias given in the controller). The classic controller logs
 * in at `POST /api/login` (cookie `unifises`); UniFi OS consoles at `POST /api/auth/login`
 * (cookie `TOKEN`, plus an `X-CSRF-Token` for later POSTs) with the Network API under
 * `/proxy/network`. The session is closed afterwards.
 */
import type { Settings } from '../core/settings.js';
import { isObject } from '../util/is-object.js';
import { jsonOf, NameSourceError, request, under, type SourceResponse } from './http.js';
import type { NameRecord, SourceContext } from './types.js';

type Config = Pick<Settings['name_sources']['unifi'], 'url' | 'username' | 'password' | 'site' | 'unifi_os' | 'verify_tls'>;

export async function fetchUnifi(config: Config, ctx: SourceContext): Promise<NameRecord[]> {
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
    return records;
  } finally {
    const logoutPath = config.unifi_os ? '/api/auth/logout' : '/api/logout';
    await request(under(config.url, logoutPath), { ...opts, method: 'POST', headers, json: {} }).catch(() => undefined);
  }
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
