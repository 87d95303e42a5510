/**
 * The native engine's UDP port scan, without privileges: one connected UDP socket per probe, so
 * that the kernel hands it the ICMP "port unreachable" of a closed port as ECONNREFUSED. Each
 * port gets its service's request (core/udp-probes.ts), sent again once after a silence (a
 * datagram may be lost, and Linux rate-limits its ICMP errors per host):
 *   an answer → open; refused → closed; silence after every try → open|filtered.
 * Unicast to the scanned host only; a bounded number of sockets at once; every socket is closed
 * when the signal fires.
 */
import dgram from 'node:dgram';
import { udpPayload } from '../../core/udp-probes.js';
import { runPool } from './connect-pool.js';

export interface UdpScanOptions {
  /** Probes in flight at most (sockets open at once). */
  concurrency: number;
  /** How long one try waits for an answer, in ms. */
  timeoutMs: number;
  /** Tries after the first for a port that stayed silent. */
  retries: number;
  signal: AbortSignal;
  /** Told each probe's end: probes done, probes in all. */
  onProgress?: (done: number, total: number) => void;
}

export type UdpOutcome = { state: 'open'; reply: Buffer } | { state: 'closed' } | { state: 'silent' };

export interface UdpHostResult {
  host: string;
  /** Ports that answered, with their first answer. */
  open: Map<number, Buffer>;
  closed: number[];
  /** Ports that neither answered nor refused (open|filtered). */
  silent: number[];
}

/** Longest answer kept (a service's first datagram is plenty to recognise it). */
const MAX_REPLY_BYTES = 4096;

/** Probes every port of every host; results in the order of `hosts`, each list by port. */
export async function udpScan(hosts: readonly string[], ports: readonly number[], options: UdpScanOptions): Promise<UdpHostResult[]> {
  const results = new Map(hosts.map((host) => [host, { host, open: new Map<number, Buffer>(), closed: [] as number[], silent: [] as number[] }]));
  if (ports.length === 0 || hosts.length === 0) return [...results.values()];
  // Ports first, hosts inside: the probes of one host are spread over the scan (its ICMP budget refills).
  const jobs = function* () {
    for (const port of ports) for (const host of hosts) yield { host, port };
  };
  const total = hosts.length * ports.length;
  let done = 0;
  await runPool(
    jobs(),
    options.concurrency,
    async ({ host, port }) => {
      const outcome = await probeUdpPort(host, port, options);
      const result = results.get(host)!;
      if (outcome.state === 'open') result.open.set(port, outcome.reply);
      else if (outcome.state === 'closed') result.closed.push(port);
      else if (!options.signal.aborted) result.silent.push(port);
      done += 1;
      options.onProgress?.(done, total);
    },
    () => options.signal.aborted,
  );
  for (const r of results.values()) {
    r.closed.sort((a, b) => a - b);
    r.silent.sort((a, b) => a - b);
  }
  return [...results.values()];
}

/** One port: its request, repeated after each silent timeout, until an answer, a refusal, the last try or the signal. */
export function probeUdpPort(
  host: string,
  port: number,
  { timeoutMs, retries, signal }: Pick<UdpScanOptions, 'timeoutMs' | 'retries' | 'signal'>,
): Promise<UdpOutcome> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve({ state: 'silent' });
    const socket = dgram.createSocket('udp4');
    let tries = 0;
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    const finish = (outcome: UdpOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      try {
        socket.close();
      } catch {
        /* already closed */
      }
      resolve(outcome);
    };
    const onAbort = (): void => finish({ state: 'silent' });
    const send = (): void => {
      tries += 1;
      socket.send(udpPayload(port, host), (err) => {
        if (err) finish(refused(err) ? { state: 'closed' } : { state: 'silent' });
      });
      timer = setTimeout(() => (tries > retries ? finish({ state: 'silent' }) : send()), timeoutMs);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    socket.on('message', (reply) => finish({ state: 'open', reply: Buffer.from(reply.subarray(0, MAX_REPLY_BYTES)) }));
    // ECONNREFUSED: the host's ICMP port unreachable for this connected socket. Anything else
    // (no route, no buffer) says nothing about the port: counted as silence.
    socket.on('error', (err) => finish(refused(err) ? { state: 'closed' } : { state: 'silent' }));
    socket.connect(port, host, (err?: Error) => {
      if (err) return finish({ state: 'silent' });
      if (!settled) send();
    });
  });
}

function refused(err: Error): boolean {
  return (err as NodeJS.ErrnoException).code === 'ECONNREFUSED';
}
