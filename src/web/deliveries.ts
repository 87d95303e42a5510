// Which notification channels keep failing, from the delivery log. Imports nothing, so the unit
// tests (node, not the bundler) can load it.

/** What the rule reads of a delivery (GET /api/notifications/deliveries). */
interface DeliveryOutcome {
  channel_id: number;
  status: 'pending' | 'sent' | 'failed';
  last_error: string | null;
}

/** Failed deliveries in a row, with none sent since, that flag a channel as failing. */
const FAILING_AFTER = 2;

/** A channel whose last deliveries all failed: how many in a row, and the last reason. */
export interface Failing {
  count: number;
  lastError: string | null;
}

/**
 * The channels whose newest finished deliveries (pending ones are still being tried) failed
 * FAILING_AFTER or more times in a row, from the delivery log, newest first.
 */
export function failingChannels(deliveries: DeliveryOutcome[]): Map<number, Failing> {
  const out = new Map<number, Failing>();
  const settled = new Set<number>();
  for (const d of deliveries) {
    if (d.status === 'pending' || settled.has(d.channel_id)) continue;
    if (d.status === 'sent') {
      settled.add(d.channel_id);
      continue;
    }
    const seen = out.get(d.channel_id);
    out.set(d.channel_id, { count: (seen?.count ?? 0) + 1, lastError: seen ? seen.lastError : d.last_error });
  }
  for (const [id, f] of out) if (f.count < FAILING_AFTER) out.delete(id);
  return out;
}
