import type { Store } from '../src/store/index.js';

/** Inserts a completed scan and `count` devices with their ports; returns counts and milliseconds. */
export function seedInventory(store: Store, count: number, seed?: number): Promise<{ devices: number; ports: number; ms: number }>;
