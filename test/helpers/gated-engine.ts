/**
 * A scan engine the test holds: discovery of a held target waits until the test releases it (or
 * the scan is cancelled), so a test decides exactly when a running scan ends. Other targets end
 * at once with no host found. Nothing is sent on the network.
 */
import type { DiscoveredHost, ScannedHost } from '../../src/core/model.js';
import { ScanAbortedError, type DiscoveryRequest, type ScanEngine } from '../../src/engines/types.js';

export class GatedEngine implements ScanEngine {
  readonly name = 'native' as const;
  /** Every target discovery was asked to probe, in order. */
  readonly discovered: string[] = [];
  private readonly gates = new Map<string, { opened: Promise<void>; open: () => void }>();

  /** Scans of `cidr` wait in discovery until `release(cidr)`. */
  hold(cidr: string): void {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    this.gates.set(cidr, { opened, open });
  }

  release(cidr: string): void {
    this.gates.get(cidr)?.open();
    this.gates.delete(cidr);
  }

  async discover(request: DiscoveryRequest): Promise<DiscoveredHost[]> {
    this.discovered.push(request.cidr);
    const gate = this.gates.get(request.cidr);
    if (gate) {
      const aborted = new Promise<void>((resolve) => request.signal.addEventListener('abort', () => resolve(), { once: true }));
      await Promise.race([gate.opened, aborted]);
    }
    if (request.signal.aborted) throw new ScanAbortedError();
    return [];
  }

  async scanPorts(): Promise<ScannedHost[]> {
    return [];
  }
}
