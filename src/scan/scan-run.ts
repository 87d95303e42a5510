/**
 * What the scan manager's collaborators share about one scan: the request, the in-process state
 * of a scan running here, and everything a run's phases and its recording need.
 */
import type { ScanProfile } from '../core/model.js';
import type { Ipv4Network } from '../core/net.js';
import type { Settings } from '../core/settings.js';
import type { NameLookup } from '../names/lookup.js';
import type { ActorType } from '../store/audit.js';
import type { ScanRow } from '../store/schema.js';
import { scanPortCoverage } from '../core/top-ports.js';
import type { PortCoverage } from '../core/coverage.js';
import type { DiscoveryRequest, ScanEngine } from '../engines/types.js';
import type { EngineSelector } from '../engines/engines.js';
import { ProgressTracker } from './progress.js';

export interface ScanRequest {
  profile: ScanProfile;
  /** CIDR or single address; defaults to network.subnet. */
  subnet?: string;
  /** A single-device scan of this address. */
  device?: string;
  actor: { name: string | null; type: ActorType; ip?: string | null; userAgent?: string | null };
  /** The scan record's triggered_by (CONTRACT §7: `<username>`, `key:<name>`, `cli`, …); default: actor.name. */
  triggeredBy?: string | null;
}

/** A scan asked for: its profile defaults to scanning.default_profile. */
export type ScanTrigger = Omit<ScanRequest, 'profile'> & { profile?: ScanProfile };

export interface RunningScan {
  id: number;
  profile: ScanProfile;
  subnet: string;
  abort: AbortController;
  /** Why the abort happened: a user's cancel, the time limit, shutdown, or the scan ended elsewhere. */
  reason: 'cancelled' | 'timeout' | 'shutdown' | 'lost' | null;
  progress: ProgressTracker;
  done: Promise<void>;
}

/** One scan as it runs: what was asked, how, and what every phase needs. */
export interface ScanRun {
  running: RunningScan;
  scan: ScanRow;
  engine: ScanEngine;
  settings: Settings;
  network: Ipv4Network;
  request: ScanRequest;
  started: number;
  engineOptions: Omit<DiscoveryRequest, 'cidr' | 'exclude'>;
  /** Records every engine process group running at once (overlapping runs), newest last. */
  recordProcessGroups: (live: readonly number[]) => void;
  /**
   * Name sources (issue 14): looked up from the scan's start, applied where discovery's hosts are
   * recorded. A run without one (results recorded from elsewhere) looks them up when it records.
   */
  names?: NameLookup;
  /** CIDR blocks the scan did not probe, when not network.exclude (an imported report's `--exclude`). */
  exclude?: string[];
  /** Who holds the scan's lease when it is not this process (an agent whose results are recorded here). */
  ownerId?: string;
}

/** A scan's in-process state as it starts here: its abort switch and progress over `hosts` hosts. */
export function runningScan(scan: ScanRow, profile: ScanProfile, hosts: number): RunningScan {
  return {
    id: scan.id,
    profile,
    subnet: scan.subnet,
    abort: new AbortController(),
    reason: null,
    progress: new ProgressTracker(profile, hosts),
    done: Promise.resolve(),
  };
}

/**
 * The run of results gathered elsewhere (an agent's upload, an imported nmap report) and recorded
 * here: no engine runs and no process is started, so its engine options are inert.
 */
export function recordingRun(run: Omit<ScanRun, 'engineOptions' | 'recordProcessGroups'>): ScanRun {
  return {
    ...run,
    engineOptions: { privileged: false, resolveHostnames: false, hostTimeoutSeconds: 0, signal: run.running.abort.signal, onProgress: () => {} },
    recordProcessGroups: () => {},
  };
}

/** The ports a scan examines: scanning.port_range with scanning.top_ports, or every port for intensive scans (core/top-ports.ts). */
export function portListOf(settings: Settings, profile: ScanProfile, engines: EngineSelector): PortCoverage {
  return scanPortCoverage(settings.scanning, profile, engines.frequentTcpPorts().ports);
}
