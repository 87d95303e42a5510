/**
 * SNMP v2c, read-only, unicast to the host's UDP 161 with net-snmp: one GET of the system group's
 * sysDescr, sysObjectID and sysName and of snmpEngineID (SNMP-FRAMEWORK-MIB; a stable identity
 * key), trying each configured community in turn until one answers. A wrong community gets
 * silence, so the probe's time is shared among them. The session's socket drops datagrams from
 * anyone but the host, and its own requests are cancelled when the probe ends.
 *
 * With the community that answered, the rest of the probe's time goes to a bounded walk (GETBULK,
 * at most MAX_BRIDGE_ROWS and MAX_LLDP_ROWS rows, stopped by the probe's deadline and cancel;
 * what came by then is kept) of two tables a switch has: BRIDGE-MIB dot1dTpFdbTable (or
 * Q-BRIDGE-MIB dot1qTpFdbTable when that is empty), the MACs learned behind each port, and LLDP-MIB
 * lldpRemTable, the neighbours on its ports. A host that is no bridge answers the first GETBULK
 * with an object past the table, so the walk costs it one round trip.
 */
import dgram from 'node:dgram';
import { isIP } from 'node:net';
import snmp, { type Session, type Varbind } from 'net-snmp';
import { MAX_BRIDGE_ROWS, MAX_LLDP_ROWS, type SnmpBridgeEntry, type SnmpLldpNeighbour, type SnmpResult } from '../core/probe-results.js';
import { deadlineSignal, isRefused, isUnicastHost, pinDestination, portOf, quietly, timeoutOf, type ProbeOptions } from './common.js';
import { cleanText } from './text.js';

export const SNMP_PORT = 161;

export const OIDS = {
  sysDescr: '1.3.6.1.2.1.1.1.0',
  sysObjectID: '1.3.6.1.2.1.1.2.0',
  sysName: '1.3.6.1.2.1.1.5.0',
  snmpEngineID: '1.3.6.1.6.3.10.2.1.1.0',
} as const;

/** The columns the walk reads (the table's entry OID + column number). */
export const TABLE_OIDS = {
  /** BRIDGE-MIB dot1dTpFdbPort, indexed by the MAC (six sub-identifiers). */
  dot1dTpFdbPort: '1.3.6.1.2.1.17.4.3.1.2',
  /** Q-BRIDGE-MIB dot1qTpFdbPort, indexed by the filtering database id then the MAC. */
  dot1qTpFdbPort: '1.3.6.1.2.1.17.7.1.2.2.1.2',
  /** LLDP-MIB lldpRemChassisIdSubtype, lldpRemChassisId, lldpRemSysName; indexed by time mark, local port, index. */
  lldpRemChassisIdSubtype: '1.0.8802.1.1.2.1.4.1.1.4',
  lldpRemChassisId: '1.0.8802.1.1.2.1.4.1.1.5',
  lldpRemSysName: '1.0.8802.1.1.2.1.4.1.1.9',
} as const;

/** Rows asked per GETBULK: ~40 bytes each, well under MAX_ANSWER_BYTES. */
const BULK_REPETITIONS = 32;
/** lldpRemChassisIdSubtype macAddress(4). */
const CHASSIS_ID_MAC = 4;

/** A GetResponse for four scalars is a few hundred bytes; a long sysDescr stays far below this. */
const MAX_ANSWER_BYTES = 16 * 1024;
/** Communities tried per host, whatever the settings list: each silent one costs its share of time. */
const MAX_COMMUNITIES = 8;

export interface SnmpProbeOptions extends ProbeOptions {
  /** Tried in order; the first that answers is reported. Default `['public']`. */
  communities?: string[];
  /** Walk the bridge and LLDP tables after the system group (default true). */
  tables?: boolean;
  /** Rows read at most per table (default and ceiling: MAX_BRIDGE_ROWS, MAX_LLDP_ROWS). */
  maxRows?: { bridge?: number; lldp?: number };
}

/**
 * A dgram module for net-snmp whose sockets are connected to the host's port (sending nowhere
 * else, `onRefused` called when the host answers "port unreachable") and keep only the host's
 * datagrams, each at most the cap.
 */
function hostOnlyDgram(host: string, port: number, onRefused: () => void) {
  return {
    createSocket(type: 'udp4' | 'udp6'): dgram.Socket {
      const socket = dgram.createSocket(type);
      const connected = new Promise<void>((resolve) => socket.connect(port, host, () => resolve()));
      pinDestination(socket, connected);
      socket.on('error', (error) => {
        if (isRefused(error)) onRefused();
      });
      const on = socket.on.bind(socket);
      socket.on = ((event: string, listener: (...args: unknown[]) => void) => {
        if (event !== 'message') return on(event, listener);
        return on('message', (msg: Buffer, rinfo: dgram.RemoteInfo) => {
          if (rinfo.address === host && rinfo.port === port && msg.length <= MAX_ANSWER_BYTES) listener(msg, rinfo);
        });
      }) as typeof socket.on;
      return socket;
    },
  };
}

function octets(value: unknown): Buffer | null {
  if (Buffer.isBuffer(value)) return value;
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  return null;
}

function textOf(varbind: Varbind | undefined, max: number): string | null {
  if (!varbind || snmp.isVarbindError(varbind)) return null;
  const bytes = octets(varbind.value);
  return bytes ? cleanText(bytes.subarray(0, max * 4).toString('utf8'), max) : null;
}

function oidOf(varbind: Varbind | undefined): string | null {
  if (!varbind || snmp.isVarbindError(varbind) || typeof varbind.value !== 'string') return null;
  return /^[0-9]+(\.[0-9]+){1,127}$/.test(varbind.value) ? varbind.value : null;
}

function hexOf(varbind: Varbind | undefined): string | null {
  if (!varbind || snmp.isVarbindError(varbind)) return null;
  const bytes = octets(varbind.value);
  // RFC 3411: an engine ID is 5 to 32 octets.
  return bytes && bytes.length >= 5 && bytes.length <= 32 ? bytes.toString('hex') : null;
}

/** One GET on an open session: the varbinds, null on silence or refusal, 'error' when the agent refused the PDU. */
function get(session: Session, oids: string[], signal: AbortSignal): Promise<Varbind[] | 'refused' | null> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (value: Varbind[] | 'refused' | null) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    };
    const onAbort = () => finish(null);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      session.get(oids, (error, varbinds) => {
        if (!error && Array.isArray(varbinds)) finish(varbinds);
        // An answer with an error status (v1-style noSuchName for one OID): the agent is there.
        else if (error && error.name === 'RequestFailedError') finish('refused');
        else finish(null);
      });
    } catch {
      finish(null);
    }
  });
}

/** One GETBULK on an open session: the varbinds, or null on silence, refusal or cancel. */
function getBulk(session: Session, oid: string, signal: AbortSignal): Promise<Varbind[] | null> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (value: Varbind[] | null) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    };
    const onAbort = () => finish(null);
    if (signal.aborted) return finish(null);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      // net-snmp gives a repeated OID's varbinds as an array in its place.
      session.getBulk([oid], 0, BULK_REPETITIONS, (error, varbinds) => {
        const rows: unknown = Array.isArray(varbinds) && Array.isArray(varbinds[0]) ? varbinds[0] : varbinds;
        finish(!error && Array.isArray(rows) ? (rows as Varbind[]) : null);
      });
    } catch {
      finish(null);
    }
  });
}

/** Whether dotted OID `a` sorts after `b` (the walk must move forward, or an agent could loop it). */
function after(a: string, b: string): boolean {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] > y[i];
  return x.length > y.length;
}

/**
 * The rows of one table column, as (index sub-identifiers, varbind), at most `max`; stops at the
 * column's end, an error, a step backwards, the signal. What was read by then is returned.
 */
async function walkColumn(session: Session, column: string, max: number, signal: AbortSignal): Promise<{ index: number[]; varbind: Varbind }[]> {
  const rows: { index: number[]; varbind: Varbind }[] = [];
  const prefix = `${column}.`;
  let last = column;
  while (rows.length < max && !signal.aborted) {
    const varbinds = await getBulk(session, last, signal);
    if (!varbinds || varbinds.length === 0) break;
    for (const varbind of varbinds) {
      if (snmp.isVarbindError(varbind) || typeof varbind.oid !== 'string' || !varbind.oid.startsWith(prefix) || !after(varbind.oid, last))
        return rows;
      rows.push({ index: varbind.oid.slice(prefix.length).split('.').map(Number), varbind });
      last = varbind.oid;
      if (rows.length >= max) return rows;
    }
  }
  return rows;
}

function macOfIndex(index: readonly number[]): string | null {
  if (index.length !== 6 || index.some((n) => !Number.isInteger(n) || n < 0 || n > 255)) return null;
  return index
    .map((n) => n.toString(16).padStart(2, '0'))
    .join(':')
    .toUpperCase();
}

function integerOf(varbind: Varbind): number | null {
  return typeof varbind.value === 'number' && Number.isInteger(varbind.value) ? varbind.value : null;
}

/** The bridge forwarding table: dot1dTpFdbTable, else dot1qTpFdbTable (the MAC is the index's last six sub-identifiers). */
async function walkBridge(session: Session, signal: AbortSignal, max: number): Promise<SnmpBridgeEntry[]> {
  const read = (rows: { index: number[]; varbind: Varbind }[]) => {
    const out = new Map<string, SnmpBridgeEntry>();
    for (const { index, varbind } of rows) {
      const mac = macOfIndex(index.slice(-6));
      const port = integerOf(varbind);
      // Port 0: learned, but the bridge does not know on which port.
      if (mac && port !== null && port > 0 && port <= 0xffff && !out.has(mac)) out.set(mac, { mac, port });
    }
    return [...out.values()];
  };
  const d = read(await walkColumn(session, TABLE_OIDS.dot1dTpFdbPort, max, signal));
  if (d.length > 0 || signal.aborted) return d;
  return read(await walkColumn(session, TABLE_OIDS.dot1qTpFdbPort, max, signal));
}

/** The LLDP neighbours: chassis id subtype, chassis id and system name, joined by their index. */
async function walkLldp(session: Session, signal: AbortSignal, max: number): Promise<SnmpLldpNeighbour[]> {
  const subtypes = await walkColumn(session, TABLE_OIDS.lldpRemChassisIdSubtype, max, signal);
  if (subtypes.length === 0) return [];
  const ids = await walkColumn(session, TABLE_OIDS.lldpRemChassisId, max, signal);
  const names = await walkColumn(session, TABLE_OIDS.lldpRemSysName, max, signal);
  const key = (index: number[]) => index.join('.');
  const idOf = new Map(ids.map((r) => [key(r.index), r.varbind]));
  const nameOf = new Map(names.map((r) => [key(r.index), r.varbind]));
  const out: SnmpLldpNeighbour[] = [];
  for (const { index, varbind } of subtypes) {
    // Index: lldpRemTimeMark, lldpRemLocalPortNum, lldpRemIndex.
    if (index.length !== 3) continue;
    const localPort = index[1];
    const id = octets(idOf.get(key(index))?.value);
    const chassisMac =
      integerOf(varbind) === CHASSIS_ID_MAC && id && id.length === 6
        ? [...id]
            .map((b) => b.toString(16).padStart(2, '0'))
            .join(':')
            .toUpperCase()
        : null;
    out.push({ localPort, chassisMac, sysName: textOf(nameOf.get(key(index)), 255) });
  }
  return out;
}

export async function probeSnmp(host: string, options: SnmpProbeOptions = {}): Promise<SnmpResult | null> {
  if (!isUnicastHost(host)) return null;
  return quietly(() => run(host, options));
}

async function run(host: string, options: SnmpProbeOptions): Promise<SnmpResult | null> {
  const port = portOf(options, SNMP_PORT);
  // Ends the probe at once when the host says nothing listens on its SNMP port.
  const refused = new AbortController();
  const signal = AbortSignal.any([deadlineSignal(options), refused.signal]);
  const communities = [...new Set(options.communities ?? ['public'])].filter((c) => c.length > 0 && c.length <= 255).slice(0, MAX_COMMUNITIES);
  const started = Date.now();
  const total = timeoutOf(options);
  for (let i = 0; i < communities.length && !signal.aborted; i++) {
    const community = communities[i];
    const remaining = total - (Date.now() - started);
    // The remaining time shared among the communities left; two tries each (UDP may lose one).
    const share = Math.max(100, Math.floor(remaining / (communities.length - i)));
    const session = snmp.createSession(host, community, {
      port,
      version: snmp.Version2c,
      transport: isIP(host) === 6 ? 'udp6' : 'udp4',
      timeout: Math.max(50, Math.floor(share / 2)),
      retries: 1,
      dgramModule: hostOnlyDgram(host, port, () => refused.abort()),
    });
    session.on('error', () => {});
    try {
      let answer = await get(session, Object.values(OIDS), signal);
      // An agent that refuses the whole PDU for one unknown OID (v1 behaviour) gets the system group alone.
      if (answer === 'refused') answer = await get(session, [OIDS.sysDescr, OIDS.sysObjectID, OIDS.sysName], signal);
      if (answer && answer !== 'refused') {
        const result: SnmpResult = {
          community,
          sysDescr: textOf(answer[0], 1024),
          sysObjectID: oidOf(answer[1]),
          sysName: textOf(answer[2], 255),
          engineId: hexOf(answer[3]),
        };
        if (options.tables !== false) {
          // The tables in the probe's time left; whatever came by its end is kept.
          const limit = (given: number | undefined, ceiling: number) => Math.max(1, Math.min(ceiling, given ?? ceiling));
          const bridge = await walkBridge(session, signal, limit(options.maxRows?.bridge, MAX_BRIDGE_ROWS));
          if (bridge.length > 0) result.bridge = bridge;
          const lldp = await walkLldp(session, signal, limit(options.maxRows?.lldp, MAX_LLDP_ROWS));
          if (lldp.length > 0) result.lldp = lldp;
        }
        return result;
      }
    } finally {
      try {
        session.cancelRequests(new Error('probe ended'));
        session.close();
      } catch {
        // already closed
      }
    }
  }
  return null;
}
