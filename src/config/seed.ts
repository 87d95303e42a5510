import { defaultSettings, mergeSettings, validateSettings } from '../core/settings.js';
import type { Store } from '../store/index.js';

/**
 * Stores the initial configuration (defaults, then the config file's `settings`, then the seeding
 * variables) when the database has none yet. Returns true when it did.
 */
export async function seedSettings(store: Store, seed: Record<string, unknown>): Promise<boolean> {
  if (await store.settings.exists()) return false;
  const seeded = validateSettings(mergeSettings(defaultSettings(), seed));
  if (!seeded.ok) throw new Error(`initial configuration: ${seeded.error}`);
  await store.settings.put(seeded.settings);
  return true;
}
