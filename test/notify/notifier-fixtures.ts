/**
 * The set-up the notifier tests share: per test, a fresh database and a webhook receiver on
 * 127.0.0.1; afterwards every notifier the test started is stopped (before the database goes) and
 * the receiver closed.
 */
import { afterEach, beforeEach } from 'vitest';
import type { Notifier } from '../../src/notify/notifier.js';
import type { Store } from '../../src/store/index.js';
import { freshDatabaseEachTest, type TestDatabase } from '../helpers/databases.js';
import { startReceiver, type Receiver } from '../helpers/receivers.js';

/** Registers the hooks; `use` gets each test's store and receiver. Push started notifiers onto the returned list. */
export function notifierEachTest(database: TestDatabase, use: (bed: { store: Store; receiver: Receiver }) => void): Notifier[] {
  let store: Store;
  let receiver: Receiver | undefined;
  const notifiers: Notifier[] = [];
  freshDatabaseEachTest(database, (opened) => {
    store = opened.store;
  });
  beforeEach(async () => {
    receiver = await startReceiver();
    use({ store, receiver });
  });
  afterEach(async () => {
    await Promise.all(notifiers.splice(0).map((n) => n.stop()));
    await receiver?.close();
  });
  return notifiers;
}
