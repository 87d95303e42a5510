/** Turning engine progress events into one overall progress record. Pure apart from the clock passed in. */
import type { ScanProgress } from '../schemas/scan.js';
import type { EngineProgress } from '../engines/types.js';
import type { ScanProfile } from '../core/model.js';
import { overallPercent, timeLeft } from '../core/scan-progress.js';

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
    const shape = this.profile === 'quick' ? 'quick' : 'full';
    const hostsDone = event.hostsDone ?? this.state.hosts_done;
    const hostsTotal = event.hostsTotal ?? this.state.hosts_total;
    const reading = { phase: event.phase, percent: event.percent, hostsDone, hostsTotal, hostsInGroup: event.hostsInGroup };
    const overall = overallPercent(shape, reading) ?? this.state.percent;
    const atTaskEnd = overallPercent(shape, { ...reading, percent: 100 }) ?? overall;
    const elapsed = (now - this.startedAt) / 1000;
    // Never move backwards: nmap restarts its percentage for each task and host group.
    const percent = Math.max(this.state.percent, Math.min(100, Math.round(overall * 10) / 10));
    this.state = {
      ...this.state,
      phase: event.phase,
      percent,
      hosts_found: event.hostsFound ?? this.state.hosts_found,
      hosts_done: hostsDone,
      hosts_total: hostsTotal,
      current_host: event.currentHost === undefined ? this.state.current_host : event.currentHost,
      elapsed_seconds: Math.round(elapsed * 10) / 10,
      eta_seconds: timeLeft({ percent, percentAtTaskEnd: atTaskEnd, elapsedSeconds: elapsed, taskRemaining: event.etaSeconds ?? null }),
    };
    return this.state;
  }

  get current(): ScanProgress {
    return { ...this.state, elapsed_seconds: Math.round(((Date.now() - this.startedAt) / 1000) * 10) / 10 };
  }
}
