/** Turning engine progress events into one overall progress record. Pure apart from the clock passed in. */
import type { ScanProgress } from '../schemas/scan.js';
import type { EngineProgress, ScanPhase } from '../engines/types.js';
import type { ScanProfile } from '../core/model.js';

/** Share of the overall bar each phase covers, as [start, end] percent. */
const SPANS: Record<'quick' | 'full', Partial<Record<ScanPhase, [number, number]>>> = {
  quick: { queued: [0, 0], discovery: [0, 95], saving: [95, 100], done: [100, 100] },
  full: { queued: [0, 0], discovery: [0, 20], ports: [20, 60], services: [60, 90], os: [90, 95], saving: [95, 100], done: [100, 100] },
};

export class ProgressTracker {
  private state: ScanProgress;
  private readonly startedAt: number;

  constructor(
    private readonly profile: ScanProfile,
    hostsTotal: number,
    now = Date.now(),
  ) {
    this.startedAt = now;
    this.state = {
      phase: 'queued',
      percent: 0,
      hosts_total: hostsTotal,
      hosts_found: 0,
      hosts_done: 0,
      current_host: null,
      elapsed_seconds: 0,
      eta_seconds: null,
    };
  }

  /** Applies an engine event; `percent` below 0 means "no percentage in this event". */
  update(event: EngineProgress, now = Date.now()): ScanProgress {
    const spans = SPANS[this.profile === 'quick' ? 'quick' : 'full'];
    const span = spans[event.phase] ?? [this.state.percent, this.state.percent];
    const within = event.percent >= 0 ? Math.min(100, event.percent) : null;
    const overall = within === null ? Math.max(this.state.percent, span[0]) : span[0] + ((span[1] - span[0]) * within) / 100;
    const elapsed = (now - this.startedAt) / 1000;
    // Never move backwards: nmap restarts its percentage for each task.
    const percent = Math.max(this.state.percent, Math.min(100, Math.round(overall * 10) / 10));
    this.state = {
      ...this.state,
      phase: event.phase,
      percent,
      hosts_found: event.hostsFound ?? this.state.hosts_found,
      hosts_done: event.hostsDone ?? this.state.hosts_done,
      hosts_total: event.hostsTotal ?? this.state.hosts_total,
      current_host: event.currentHost === undefined ? this.state.current_host : event.currentHost,
      elapsed_seconds: Math.round(elapsed * 10) / 10,
      eta_seconds: estimateEta(percent, elapsed, event.etaSeconds ?? null),
    };
    return this.state;
  }

  get current(): ScanProgress {
    return { ...this.state, elapsed_seconds: Math.round(((Date.now() - this.startedAt) / 1000) * 10) / 10 };
  }
}

function estimateEta(percent: number, elapsedSeconds: number, engineEstimate: number | null): number | null {
  if (percent >= 100) return 0;
  if (percent < 3 || elapsedSeconds < 1) return engineEstimate;
  const linear = (elapsedSeconds * (100 - percent)) / percent;
  return Math.round(engineEstimate === null ? linear : Math.max(linear, engineEstimate));
}
