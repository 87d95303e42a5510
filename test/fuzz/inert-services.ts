/**
 * Services for a server that is fed arbitrary input: nothing it is asked to do may leave this
 * machine. Fuzzed scan requests name arbitrary subnets and addresses, and a fuzzed configuration
 * can point the update feed anywhere, so the scan engine and the update checker are replaced by
 * stand-ins that do the bookkeeping of the real ones without sending a packet.
 */
import type { EngineInfo, EngineSetting } from '../../src/engines/engines.js';
import { EngineSelector } from '../../src/engines/engines.js';
import type { DiscoveredHost, ScannedHost } from '../../src/core/model.js';
import { ScanAbortedError, type DiscoveryRequest, type PortScanRequest, type ScanEngine } from '../../src/engines/types.js';
import type { Settings } from '../../src/core/settings.js';
import { UpdateChecker, type UpdateCheckResult } from '../../src/updates/checker.js';
import { DRIVERS, type DriverRegistry } from '../../src/notify/channels/index.js';

/**
 * An engine that records what it was asked to scan and reports that no host answered. A scan of
 * a target in `held` stays in discovery until it is cancelled, so there is a running scan to
 * cancel or report on.
 */
export class RecordingEngine implements ScanEngine {
  readonly name = 'native' as const;
  /** Every target discovery was asked to probe. */
  readonly discovered: string[] = [];
  readonly held = new Set<string>();

  async discover(request: DiscoveryRequest): Promise<DiscoveredHost[]> {
    this.discovered.push(request.cidr);
    if (this.held.has(request.cidr)) {
      if (!request.signal.aborted) await new Promise((resolve) => request.signal.addEventListener('abort', resolve, { once: true }));
      throw new ScanAbortedError();
    }
    return [];
  }

  async scanPorts(_request: PortScanRequest): Promise<ScannedHost[]> {
    return [];
  }
}

/** Always selects the given engine, whatever scanning.engine says, and never looks for nmap. */
export class FixedEngineSelector extends EngineSelector {
  constructor(private readonly engine: ScanEngine) {
    super();
  }

  override async nmapVersion(): Promise<string | null> {
    return null;
  }

  override async select(_setting: EngineSetting): Promise<ScanEngine> {
    return this.engine;
  }

  override async info(_setting: EngineSetting): Promise<EngineInfo> {
    return { engine: 'native', nmap_version: null, privileged: false };
  }
}

/** A closed port on loopback: every feed request fails at once, on this machine. */
export const CLOSED_FEED_URL = 'http://127.0.0.1:9/releases/latest';

/** The real checker (cache, errors, answer shape), always reading a feed on a closed loopback port. */
export class LoopbackUpdateChecker extends UpdateChecker {
  override check(settings: Settings['updates'], force: boolean): Promise<UpdateCheckResult> {
    return super.check({ ...settings, feed_url: CLOSED_FEED_URL }, force);
  }
}

/**
 * Notification drivers that validate like the real ones but send nothing: a fuzzed channel can
 * name any URL or host, and its test button or a finished scan would otherwise reach it.
 */
export function inertDrivers(): DriverRegistry {
  return Object.fromEntries(
    Object.entries(DRIVERS).map(([type, driver]) => [type, { ...driver, send: async () => {}, publishState: undefined, close: undefined }]),
  ) as unknown as DriverRegistry;
}
