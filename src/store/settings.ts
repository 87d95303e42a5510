import type { Kysely } from 'kysely';
import { type Settings, withDefaults } from '../core/settings.js';
import { nowIso } from './clock.js';
import type { Database } from './schema.js';

const CONFIG_KEY = 'config';
/**
 * Another instance sharing the database may change the config; re-read at most this often (on
 * PostgreSQL the event relay also tells this process at once: changedElsewhere).
 */
const CACHE_MS = 2000;

/** The configuration document, kept in the database so every instance shares it. */
export class SettingsStore {
  private cached: { at: number; value: Settings } | undefined;
  /** Bumped by changedElsewhere: a read started before keeps its (maybe older) value out of the cache. */
  private generation = 0;
  /** Told after every put through this store (the event relay tells the other instances before the put returns). */
  private readonly changeListeners = new Set<() => Promise<void>>();

  constructor(private readonly db: Kysely<Database>) {}

  onChange(listener: () => Promise<void>): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Another process changed the configuration (the event relay says so): the next get() reads it again. */
  changedElsewhere(): void {
    // peek() keeps answering with the last value read until then.
    if (this.cached) this.cached = { at: -Infinity, value: this.cached.value };
    this.generation++;
  }

  async exists(): Promise<boolean> {
    const row = await this.db.selectFrom('settings').select('key').where('key', '=', CONFIG_KEY).executeTakeFirst();
    return row !== undefined;
  }

  async get(): Promise<Settings> {
    if (this.cached && Date.now() - this.cached.at < CACHE_MS) return this.cached.value;
    const generation = this.generation;
    const row = await this.db.selectFrom('settings').select('value').where('key', '=', CONFIG_KEY).executeTakeFirst();
    const value = withDefaults(row ? JSON.parse(row.value) : {});
    this.cached = { at: generation === this.generation ? Date.now() : -Infinity, value };
    return value;
  }

  /** The last value read, without a database round trip (defaults before the first read). */
  peek(): Settings | undefined {
    return this.cached?.value;
  }

  async put(settings: Settings): Promise<void> {
    const now = nowIso();
    const value = JSON.stringify(settings);
    await this.db
      .insertInto('settings')
      .values({ key: CONFIG_KEY, value, updated_at: now })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value, updated_at: now }))
      .execute();
    this.cached = { at: Date.now(), value: settings };
    // Listeners do not reject (the relay logs its own failures).
    await Promise.all([...this.changeListeners].map((listener) => listener()));
  }
}
