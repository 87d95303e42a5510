/**
 * Services for a server that is fed arbitrary input: nothing it is asked to do may leave this
 * machine. Fuzzed scan requests name arbitrary subnets and addresses, and a fuzzed configuration
 * can point the update feed anywhere, so the scan engine and the update checker are replaced by
 * stand-ins that do the bookkeeping of the real ones without sending a packet.
 */
import type { EngineInfo, EngineSetting } from '../../src/scan/engines.js';
import { EngineSelector } from '../../src/scan/engines.js';
import type { DiscoveredHost, DiscoveryRequest, PortScanRequest, ScanEngine, ScannedHost } from '../../src/scan/types.js';
import type { Settings } from '../../src/core/settings.js';
import { UpdateChecker, type UpdateCheckResult } from '../../src/updates/checker.js';

/** An engine that records what it was asked to scan and reports that no host answered. */
export class RecordingEngine implements ScanEngine {
  readonly name = 'native' as const;
  readonly discovered: string[] = [];
  readonly portScans: string[][] = [];

  async discover(request: DiscoveryRequest): Promise<DiscoveredHost[]> {
    this.discovered.push(request.cidr);
    return [];
  }

  async scanPorts(request: PortScanRequest): Promise<ScannedHost[]> {
    this.portScans.push(request.hosts);
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
  readonly requestedFeeds: string[] = [];

  override check(settings: Settings['updates'], force: boolean): Promise<UpdateCheckResult> {
    this.requestedFeeds.push(settings.feed_url);
    return super.check({ ...settings, feed_url: CLOSED_FEED_URL }, force);
  }
}
