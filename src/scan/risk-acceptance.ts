/**
 * Accepted risk (CONTRACT §17, §18): accepting a finding of a device, removing the acceptance, and
 * its expiry (run by the maintenance job with the clock it is given). Each rescore the device
 * from its stored findings (core/risk.ts rescoreFindings: an accepted finding stays listed, with
 * score 0, and counts toward neither level nor score) and publish `risk_changed` when its level changed.
 */
import { rescoreFindings } from '../core/risk.js';
import type { RiskLevel } from '../core/severity.js';
import type { EventBus } from '../events/bus.js';
import type { AcceptanceRow } from '../store/acceptances.js';
import { nowIso } from '../store/clock.js';
import type { Store } from '../store/index.js';
import type { RiskChange } from './evaluate.js';

export type RiskChangeReason = 'scan' | 'reassessed' | 'accepted' | 'acceptance_removed' | 'acceptance_expired';

/** Publishes `risk_changed` for each device whose level changed. */
export async function publishRiskChanges(store: Store, events: EventBus | null, changes: RiskChange[], reason: RiskChangeReason): Promise<void> {
  if (!events || changes.length === 0) return;
  const summaries = new Map((await store.devices.summariesOf(changes.map((c) => c.deviceId))).map((d) => [d.id, d]));
  for (const c of changes) {
    const d = summaries.get(c.deviceId);
    if (!d) continue;
    events.publish('risk_changed', {
      device_id: d.id,
      ip_address: d.ip_address,
      name: d.label ?? d.hostname,
      before: c.before,
      after: c.after,
      reason,
    });
  }
}

export class RiskAcceptances {
  constructor(
    private readonly store: Store,
    private readonly events: EventBus | null,
  ) {}

  /** Rescores a device with its acceptances as they are at `now`; returns the change of its level, if any. */
  async rescore(deviceId: number, now: string = nowIso()): Promise<RiskChange | null> {
    const row = await this.store.devices.getRow(deviceId);
    if (!row) return null;
    const findings = await this.store.evaluation.findingsOf(deviceId);
    const accepted = (await this.store.acceptances.activeKeysOf([deviceId], now)).get(deviceId) ?? new Set<string>();
    const risk = rescoreFindings(findings, accepted);
    await this.store.evaluation.applyScores(deviceId, risk);
    const before = { level: row.risk_level as RiskLevel, score: row.risk_score };
    return before.level === risk.level ? null : { deviceId, before, after: { level: risk.level, score: risk.score } };
  }

  async accepted(deviceId: number, now: string): Promise<void> {
    const change = await this.rescore(deviceId, now);
    if (change) await publishRiskChanges(this.store, this.events, [change], 'accepted');
  }

  async removed(deviceId: number, now: string): Promise<void> {
    const change = await this.rescore(deviceId, now);
    if (change) await publishRiskChanges(this.store, this.events, [change], 'acceptance_removed');
  }

  /**
   * Ends every acceptance whose expiry has come (at `now`): audited `risk_acceptance_expired`, the
   * device rescored (the finding counts again) and `risk_changed` published when its level changed.
   * Returns the acceptances it ended.
   */
  async expireDue(now: Date = new Date()): Promise<AcceptanceRow[]> {
    const at = nowIso(now);
    const ended: AcceptanceRow[] = [];
    for (const a of await this.store.acceptances.due(at)) {
      // Another instance may have ended it meanwhile: only the one that did audits and rescores.
      if (!(await this.store.acceptances.end(a.id, 'expired', at))) continue;
      ended.push(a);
      await this.store.audit.write({
        action: 'risk_acceptance_expired',
        actor: 'system',
        actorType: 'system',
        resourceType: 'acceptance',
        resourceId: a.id,
        details: { device_id: a.device_id, finding_key: a.finding_key, reason: a.reason, accepted_by: a.created_by, expires_at: a.expires_at },
        success: true,
      });
    }
    const changes: RiskChange[] = [];
    for (const deviceId of new Set(ended.map((a) => a.device_id))) {
      const change = await this.rescore(deviceId, at);
      if (change) changes.push(change);
    }
    await publishRiskChanges(this.store, this.events, changes, 'acceptance_expired');
    return ended;
  }
}
