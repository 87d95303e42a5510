import type { ScanEngineName, ScanEngineSetting } from '../core/model.js';
import { nmapVersion, NmapEngine } from './nmap.js';
import { hasRawSocketPrivilege } from './privileges.js';
import type { ScanEngine } from './types.js';
import { EngineUnavailableError } from './errors.js';
import { frequentTcpPorts, nmapServicesCandidates, type PortRanking } from './top-ports.js';

/** What `scanning.engine` may say (core/model.ts). */
export type EngineSetting = ScanEngineSetting;

export interface EngineInfo {
  /** The engine a scan started now would use. */
  engine: ScanEngineName;
  nmap_version: string | null;
  privileged: boolean;
}

/** How long an nmap availability check is trusted (installing nmap takes effect within this). */
const DETECT_TTL_MS = 30_000;

/** Chooses the scan engine: nmap when installed (or required), the native engine otherwise. */
export class EngineSelector {
  private detected: { at: number; version: string | null } | undefined;

  /**
   * `nmapBinary` and `nmapDataDir` come from NETWARDEN_NMAP_PATH and NMAPDIR (config/environment.ts);
   * the defaults are nmap on the PATH and its usual data folders.
   */
  constructor(
    private readonly nmapBinary = 'nmap',
    private readonly createNative: () => Promise<ScanEngine> = async () => new (await import('./native/engine.js')).NativeEngine(),
    private readonly nmapDataDir: string | null = null,
  ) {}

  /** The frequent-port ranking of this nmap's `nmap-services` (the built-in one without it): `scanning.top_ports`. */
  frequentTcpPorts(): PortRanking {
    return frequentTcpPorts(nmapServicesCandidates({ NMAPDIR: this.nmapDataDir ?? undefined, NETWARDEN_NMAP_PATH: this.nmapBinary }));
  }

  async nmapVersion(): Promise<string | null> {
    if (!this.detected || Date.now() - this.detected.at > DETECT_TTL_MS) {
      this.detected = { at: Date.now(), version: await nmapVersion(this.nmapBinary) };
    }
    return this.detected.version;
  }

  async select(setting: EngineSetting): Promise<ScanEngine> {
    if (setting === 'native') return this.createNative();
    const version = await this.nmapVersion();
    if (version) return new NmapEngine(this.nmapBinary);
    if (setting === 'nmap') {
      throw new EngineUnavailableError('scanning.engine is "nmap" but nmap is not installed; install nmap or set scanning.engine to auto or native');
    }
    return this.createNative();
  }

  async info(setting: EngineSetting): Promise<EngineInfo> {
    const version = await this.nmapVersion();
    return {
      engine: setting === 'native' || (setting === 'auto' && !version) ? 'native' : 'nmap',
      nmap_version: version,
      privileged: hasRawSocketPrivilege(),
    };
  }
}
