/**
 * The native engine's UDP probing against real sockets on loopback: an answer, a refusal (nothing
 * bound), silence after the retries; and a scan stopped by its signal ends at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { probeUdpPort, udpScan } from '../../../src/engines/native/udp.js';
import { closedUdpPort, echoingUdpResponder, randomLoopback, silentUdpResponder, type UdpListener } from '../../helpers/udp-responders.js';

describe('native UDP probing', () => {
  const open: UdpListener[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((l) => l.close()));
  });

  it('tells open, closed and open|filtered apart, retrying a silent port', async () => {
    const ip = randomLoopback();
    const answering = await echoingUdpResponder(ip, 'pong');
    const silent = await silentUdpResponder(ip);
    open.push(answering, silent);
    const closed = await closedUdpPort(ip);
    const [result] = await udpScan([ip], [answering.port, closed, silent.port], {
      concurrency: 8,
      timeoutMs: 300,
      retries: 1,
      signal: new AbortController().signal,
    });
    expect(result.host).toBe(ip);
    expect([...result.open.keys()]).toEqual([answering.port]);
    expect(result.open.get(answering.port)?.toString()).toBe('pong');
    expect(result.closed).toEqual([closed]);
    expect(result.silent).toEqual([silent.port]);
    expect(silent.received).toHaveLength(2); // the first try and one retry
  });

  it('stops at once when the signal fires, and reports no silence it did not wait out', async () => {
    const ip = randomLoopback();
    const silent = await silentUdpResponder(ip);
    open.push(silent);
    const abort = new AbortController();
    const started = Date.now();
    setTimeout(() => abort.abort(), 100);
    const outcome = probeUdpPort(ip, silent.port, { timeoutMs: 30_000, retries: 3, signal: abort.signal });
    const scan = udpScan([ip], [silent.port], { concurrency: 4, timeoutMs: 30_000, retries: 3, signal: abort.signal });
    expect(await outcome).toEqual({ state: 'silent' });
    const [result] = await scan;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.silent).toEqual([]);
    expect(result.open.size).toBe(0);
  });
});
