/**
 * Background re-evaluation after a change of the risk rules (`scanning.risk_rules`, through the API
 * or the configuration), of the zone policies (PUT /api/policies) or of the CVE dataset (`netwarden cve import`): every device is assessed
 * again once, with the new rules and data, without waiting for a scan to see it.
 *
 * Every instance checks every few seconds whether the fingerprint of the rules and dataset in use
 * (ScanEvaluator.fingerprint) is the one every device was last evaluated with
 * (`evaluation_state.fingerprint`). When it is not, the instance that takes the `reevaluation`
 * lease assesses the devices still evaluated with another fingerprint, a batch at a time, and
 * records its progress in `evaluation_state` (GET /api/evaluation/status shows it from any
 * instance). If it stops half-way, its lease runs out and another instance (or its successor)
 * carries on from the devices left. A scan that sees a device meanwhile assesses it with the new
 * fingerprint too, so the pass skips it.
 */
import type { Logger } from 'pino';
import { compileRiskRules } from '../core/risk.js';
import { addSeconds, nowIso } from '../store/clock.js';
import type { Store } from '../store/index.js';
import { ScanEvaluator, type RiskChange } from './evaluate.js';

const LEASE = 'reevaluation';
/** The lease is renewed after every batch; a holder that stopped releases it this long after its last batch. */
const LEASE_SECONDS = 60;
const DEFAULT_INTERVAL_MS = 2_000;
const BATCH = 500;

/** What GET /api/evaluation/status answers. */
export interface ReevaluationStatus {
  /** `running` while devices are being re-assessed after a rule or dataset change; `idle` otherwise. */
  state: 'idle' | 'running';
  /** Devices to re-assess in the pass under way (or the last one). */
  devices_total: number;
  /** Of those, how many are done. */
  devices_done: number;
  started_at: string | null;
  finished_at: string | null;
}

export interface ReevaluatorOptions {
  store: Store;
  log: Logger;
  /** Identifies this process as a lease holder. */
  ownerId: string;
  /** Data directory (imported CVE data); null for the shipped dataset only. */
  dataDir?: string | null;
  /** How often to check for a change (default 2 s). */
  intervalMs?: number;
  /** Told of devices whose risk level a re-assessment changed (a zone policy, a rule). */
  onRiskChanged?: (changes: RiskChange[]) => void;
}

export class Reevaluator {
  readonly evaluator: ScanEvaluator;
  private timer: NodeJS.Timeout | null = null;
  private pass: Promise<void> = Promise.resolve();
  private stopping = false;

  constructor(private readonly options: ReevaluatorOptions) {
    this.evaluator = new ScanEvaluator(options.store, options.dataDir ?? null, { onRiskChanged: options.onRiskChanged });
  }

  /** Checks now and every interval until `stop`; a pass runs in the background. */
  start(): void {
    const run = () => {
      this.pass = this.pass.then(() =>
        this.runOnce().then(
          () => undefined,
          (err: unknown) => this.options.log.warn({ err }, 'background re-evaluation failed'),
        ),
      );
    };
    run();
    this.timer = setInterval(run, this.options.intervalMs ?? DEFAULT_INTERVAL_MS);
    this.timer.unref();
  }

  /** No new pass starts, the one under way ends after its batch; resolves when it has. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.pass;
  }

  async status(): Promise<ReevaluationStatus> {
    const s = await this.options.store.evaluation.state();
    return {
      state: s.target !== null ? 'running' : 'idle',
      devices_total: s.devices_total,
      devices_done: s.devices_done,
      started_at: s.started_at,
      finished_at: s.finished_at,
    };
  }

  /**
   * One check: when the rules or dataset changed since every device was last evaluated, and this
   * instance takes the lease, re-assesses the devices left, then records the new fingerprint.
   * Returns how many devices it assessed (0 when there was nothing to do or another instance does it).
   */
  async runOnce(): Promise<number> {
    const { store, ownerId, log } = this.options;
    const rules = compileRiskRules((await store.settings.get()).scanning.risk_rules);
    const policies = await store.policies.get();
    const fingerprint = this.evaluator.fingerprint(rules, policies);
    const current = await store.evaluation.state();
    if (current.fingerprint === fingerprint && current.target === null) return 0;
    const lease = () => {
      const now = nowIso();
      return store.leases.acquire(LEASE, ownerId, now, addSeconds(now, LEASE_SECONDS), { renew: true });
    };
    if (!(await lease())) return 0;
    let done = 0;
    try {
      // Another instance may have finished the pass between the check above and the lease.
      const state = await store.evaluation.state();
      if (state.fingerprint === fingerprint && state.target === null) return 0;
      const { stale } = await store.evaluation.staleCount(fingerprint);
      // Carrying on after an interrupted pass of the same change keeps its start and count.
      const resumed = state.target === fingerprint;
      const total = resumed ? Math.max(state.devices_total, state.devices_done + stale) : stale;
      done = resumed ? total - stale : 0;
      const startedAt = resumed && state.started_at ? state.started_at : nowIso();
      await store.evaluation.setState({ target: fingerprint, devices_total: total, devices_done: done, started_at: startedAt, finished_at: null });
      if (stale > 0) log.info({ devices: stale }, 'risk rules or CVE data changed: re-evaluating devices in the background');
      for (;;) {
        if (this.stopping) return done;
        const ids = await store.evaluation.staleDevices(fingerprint, BATCH);
        if (ids.length === 0) break;
        await this.evaluator.assess(null, ids, rules, policies);
        done += ids.length;
        await store.evaluation.setState({ devices_done: Math.min(done, total) });
        if (!(await lease())) return done;
        // The rules changed again meanwhile: the next check starts over with them.
        const now = this.evaluator.fingerprint(compileRiskRules((await store.settings.get()).scanning.risk_rules), await store.policies.get());
        if (now !== fingerprint) return done;
      }
      await store.evaluation.setState({ fingerprint, target: null, devices_total: total, devices_done: total, finished_at: nowIso() });
      if (total > 0) log.info({ devices: total }, 'background re-evaluation finished');
      return done;
    } finally {
      await store.leases.release(LEASE, ownerId).catch(() => {});
    }
  }
}
