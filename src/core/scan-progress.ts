/**
 * The overall progress of a scan and its time left, from what the engine reports. Pure.
 *
 * nmap works through the hosts of a port run in host groups: each group goes through the port
 * scan, service detection and scripts, and its <host> elements are written when the group ends.
 * So a port run's share of the bar is the hosts already written plus the current group's task
 * progress over the hosts not yet written; the phase spans below say how much of the bar each
 * phase of that work covers. Each new group restarts nmap's task percentages at 0; measured over
 * the hosts the bar still moves on instead of stopping at the highest phase seen.
 */

export type ProgressPhase = 'queued' | 'discovery' | 'ports' | 'services' | 'os' | 'saving' | 'done';
export type ProgressShape = 'quick' | 'full';

/** Share of the overall bar each phase outside the port runs covers, as [start, end] percent. */
const SPANS: Record<ProgressShape, Partial<Record<ProgressPhase, [number, number]>>> = {
  quick: { queued: [0, 0], discovery: [0, 95], saving: [95, 100], done: [100, 100] },
  full: { queued: [0, 0], discovery: [0, 20], saving: [95, 100], done: [100, 100] },
};

/** Where the port runs lie on a full scan's bar. */
const PORT_RUNS: [number, number] = [20, 95];

/** Within one host group, the share of its work each nmap phase takes (port scan, service detection, OS and scripts). */
export const GROUP_PHASE_WEIGHTS: Record<'ports' | 'services' | 'os', [number, number]> = {
  ports: [0, 0.4],
  services: [0.4, 0.9],
  os: [0.9, 1],
};

export interface ProgressReading {
  phase: ProgressPhase;
  /** nmap's percentage of its current task (0–100), below 0 when the event carries none. */
  percent: number;
  /** Hosts whose results are written (port runs). */
  hostsDone?: number;
  /** Hosts the port runs have to scan. */
  hostsTotal?: number | null;
  /** Hosts of the current nmap host group (default: all those not done). */
  hostsInGroup?: number;
}

/**
 * The overall percentage (0–100) this reading stands for, or null when it says nothing about it
 * (an event without a percentage outside the port runs).
 */
export function overallPercent(shape: ProgressShape, reading: ProgressReading): number | null {
  const { phase } = reading;
  const within = reading.percent >= 0 ? Math.min(100, reading.percent) / 100 : null;
  if (shape === 'full' && (phase === 'ports' || phase === 'services' || phase === 'os')) {
    const total = reading.hostsTotal ?? 0;
    const done = Math.min(total, reading.hostsDone ?? 0);
    if (total <= 0) return null;
    const [from, to] = GROUP_PHASE_WEIGHTS[phase];
    // Without a percentage, the phase has at least begun.
    const group = from + (to - from) * (within ?? 0);
    const inGroup = Math.min(total - done, reading.hostsInGroup ?? total - done);
    const share = (done + inGroup * group) / total;
    return PORT_RUNS[0] + (PORT_RUNS[1] - PORT_RUNS[0]) * share;
  }
  const span = SPANS[shape][phase];
  if (!span) return null;
  if (within === null) return span[0];
  return span[0] + (span[1] - span[0]) * within;
}

/**
 * Seconds left: nmap's own estimate of its current task (`remaining`) plus the work after that
 * task at the pace of the work so far; the pace alone when nmap gave no estimate.
 * `percent` is the overall percentage now, `percentAtTaskEnd` what it will be when the current
 * task ends (the same when unknown).
 */
export function timeLeft(input: { percent: number; percentAtTaskEnd: number; elapsedSeconds: number; taskRemaining: number | null }): number | null {
  const { percent, elapsedSeconds, taskRemaining } = input;
  if (percent >= 100) return 0;
  const pace = percent >= 1 && elapsedSeconds >= 1 ? elapsedSeconds / percent : null;
  if (taskRemaining === null) return pace === null ? null : Math.round(pace * (100 - percent));
  const after = Math.max(0, 100 - Math.max(percent, input.percentAtTaskEnd));
  if (pace === null) return Math.round(taskRemaining);
  return Math.round(taskRemaining + pace * after);
}
