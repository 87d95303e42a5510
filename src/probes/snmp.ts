/**
 * SNMP v2c, read-only, unicast to the host's UDP 161 with net-snmp: one GET of the system group's
 * sysDescr, sysObjectID and sysName and of snmpEngineID (SNMP-FRAMEWORK-MIB; a stable identity
 * key), trying each configured community in turn until one answers. A wrong community gets
 * silence, so the probe's time is shared among them. The session's socket drops datagrams from
 * anyone but the host, and its own requests are cancelled when the probe ends.
 */
import dgram from 'node:dgram';
import { isIP } from 'node:net';
import snmp, { type Session, type Varbind } from 'net-snmp';
import type { SnmpResult } from '../core/probe-results.js';
import { deadlineSignal, isRefused, isUnicastHost, pinDestination, portOf, quietly, timeoutOf, type ProbeOptions } from './common.js';
import { cleanText } from './text.js';

export const SNMP_PORT = 161;

export const OIDS = {
  sysDescr: '1.3.6.1.2.1.1.1.0',
  sysObjectID: '1.3.6.1.2.1.1.2.0',
  sysName: '1.3.6.1.2.1.1.5.0',
  snmpEngineID: '1.3.6.1.6.3.10.2.1.1.0',
} as const;

/** A GetResponse for four scalars is a few hundred bytes; a long sysDescr stays far below this. */
const MAX_ANSWER_BYTES = 16 * 1024;
/** Communities tried per host, whatever the settings list: each silent one costs its share of time. */
const MAX_COMMUNITIES = 8;

export interface SnmpProbeOptions extends ProbeOptions {
  /** Tried in order; the first that answers is reported. Default `['public']`. */
  communities?: string[];
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
        return {
          community,
          sysDescr: textOf(answer[0], 1024),
          sysObjectID: oidOf(answer[1]),
          sysName: textOf(answer[2], 255),
          engineId: hexOf(answer[3]),
        };
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
