/** The scan engine interface: what an engine is asked to do and how it reports progress. */
import type { PortCoverage } from '../core/coverage.js';
import type { DiscoveredHost, ScanEngineName, ScanProfile, ScannedHost } from '../core/model.js';
import { NetwardenError } from '../util/errors.js';

export type ScanPhase = 'queued' | 'discovery' | 'ports' | 'services' | 'os' | 'saving' | 'done';

/** Progress reported by an engine while it works; percent is within the current phase. */
export interface EngineProgress {
  phase: ScanPhase;
  percent: number;
  hostsTotal?: number;
  hostsFound?: number;
  hostsDone?: number;
  /** Hosts the engine works on together now (an nmap host group), whose results come when they are all done. */
  hostsInGroup?: number;
  currentHost?: string | null;
  etaSeconds?: number | null;
}

export type ProgressListener = (progress: EngineProgress) => void;

/**
 * Told the process group of an engine's child process when it starts (null when it ends), so the
 * scan record can name it and a later start can end it if this process dies first.
 */
export type ProcessListener = (pgid: number | null) => void;

export interface DiscoveryRequest {
  /** Canonical IPv4 CIDR (a single address is `/32`). */
  cidr: string;
  /** CIDR blocks never probed. */
  exclude: string[];
  privileged: boolean;
  resolveHostnames: boolean;
  hostTimeoutSeconds: number;
  signal: AbortSignal;
  onProgress: ProgressListener;
  onProcess?: ProcessListener;
  /**
   * Told each host found up as soon as the engine knows (before discover resolves), so that its
   * port scan can start while discovery goes on. The list discover resolves to is what counts.
   */
  onHostUp?: (ip: string) => void;
}

export interface PortScanRequest {
  /** Live hosts, unless `verifyUp` says they may not be. */
  hosts: string[];
  /**
   * The hosts are only thought to be up (online in the previous scan): the engine checks them
   * first, with the probes discovery uses, and scans and reports only those that answer.
   */
  verifyUp?: boolean;
  profile: Exclude<ScanProfile, 'quick'>;
  /**
   * The ports as core/coverage.ts writes them: `1-1000`, `22,80,443`, `1-1000,udp:53,161`;
   * intensive scans every TCP port (and the UDP ports listed).
   */
  ports: string;
  privileged: boolean;
  osDetection: boolean;
  resolveHostnames: boolean;
  hostTimeoutSeconds: number;
  signal: AbortSignal;
  onProgress: ProgressListener;
  onProcess?: ProcessListener;
}

export interface ScanEngine {
  readonly name: ScanEngineName;
  /**
   * Whether discover and scanPorts may run at the same time, and scanPorts more than once at a
   * time (each call its own process): the scan manager then port-scans hosts while discovery
   * still runs (see ScanPipeline). Engines without it are run one phase after the other.
   */
  readonly concurrent?: boolean;
  /** Which hosts in the target answer, with MAC and vendor where visible. */
  discover(request: DiscoveryRequest): Promise<DiscoveredHost[]>;
  /** Port scan, then service/version detection on open ports, of hosts known to be live. */
  scanPorts(request: PortScanRequest): Promise<ScannedHost[]>;
  /**
   * What a port scan of `coverage` really examines with this engine, and a warning for the scan
   * log when it must leave ports out (nmap's UDP scan without privileges). Absent: all of it.
   */
  examinable?(coverage: PortCoverage, privileged: boolean): { coverage: PortCoverage; warning: string | null };
}

/** Thrown by an engine when its AbortSignal fires. */
export class ScanAbortedError extends NetwardenError {
  readonly code = 'NW_SCAN_ABORTED';

  constructor(message = 'Scan cancelled') {
    super(message);
  }
}
