import type { Store } from '../src/store/index.js';

/** Inserts a completed scan and `count` devices with their ports; returns counts and milliseconds. */
export function seedInventory(
  store: Store,
  count: number,
  seed?: number,
  options?: { subnets?: number },
): Promise<{ devices: number; ports: number; ms: number }>;

/** The /21 networks `seedInventory(…, { subnets })` spreads devices over. */
export function benchSubnets(subnets: number): string[];
