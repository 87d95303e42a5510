/**
 * Discovery and a recognised vendor (CONTRACT §15 field provenance): InventoryWriter.recordDiscovery
 * does not write the MAC registry's vendor over the vendor recognition set for the same MAC (no
 * write, so no search re-index), but does where recognition set none (and for a host with another MAC: recognition then decides again).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiscoveredHost } from '../../src/core/model.js';
import type { Store } from '../../src/store/index.js';
import { InventoryWriter } from '../../src/store/inventory.js';
import { testDatabases, type TestDatabase } from '../helpers/databases.js';

type Opened = Awaited<ReturnType<TestDatabase['open']>>;

const HP_MAC = '3C:52:82:66:00:01';
const host = (ip: string, mac: string, vendor: string): DiscoveredHost => ({ ip, mac, vendor, hostname: null });

describe.each(testDatabases())('recordDiscovery and a recognised vendor ($kind)', (database) => {
  let db: Opened;
  let store: Store;
  let writer: InventoryWriter;
  let scanId: number;

  beforeAll(async () => {
    db = await database.open();
    store = db.store;
    writer = new InventoryWriter(store.db, () => {});
    scanId = (await store.scans.create({ status: 'running', profile: 'quick', subnet: '10.9.0.0/24', scan_type: 'network', devices_found: 0 })).id;
  });
  afterAll(() => db?.cleanup());

  const at = (n: number) => new Date(Date.UTC(2026, 0, 1 + n)).toISOString();
  const vendorOf = async (id: number) =>
    (await store.db.selectFrom('devices').select('vendor').where('id', '=', id).executeTakeFirstOrThrow()).vendor;
  const recognise = (deviceId: number, vendor: string, source = 'oui') =>
    store.identity.recordRecognition(
      null,
      [
        {
          deviceId,
          keys: [],
          fields: { device_type: 'workstation', type_confidence: 60, vendor, model: null, os_name: null, os_version: null, discovered_name: null },
          evidence: [{ field: 'vendor', value: vendor, source, detail: 'test', confidence: 50 }],
          reason: 'test',
          decisions: [],
        },
      ],
      at(0),
    );

  it('keeps the recognised vendor for the same MAC; a vendor recognition did not set is the registry’s to replace', async () => {
    const [{ deviceId }] = (await writer.recordDiscovery(scanId, [host('10.9.0.1', HP_MAC, 'Hewlett Packard')], at(0))).seen;
    expect(await vendorOf(deviceId)).toBe('Hewlett Packard');
    await recognise(deviceId, 'HP');
    expect(await vendorOf(deviceId)).toBe('HP');
    // The rescan's discovery: the same MAC, the registry's name.
    await writer.recordDiscovery(scanId, [host('10.9.0.1', HP_MAC, 'Hewlett Packard')], at(1));
    expect(await vendorOf(deviceId)).toBe('HP');
    // A vendor recognition did not set (no evidence names it) is the registry's to replace.
    await store.db.updateTable('devices').set({ vendor: 'Someone' }).where('id', '=', deviceId).execute();
    await writer.recordDiscovery(scanId, [host('10.9.0.1', HP_MAC, 'Hewlett Packard')], at(2));
    expect(await vendorOf(deviceId)).toBe('Hewlett Packard');
  });

  it('a recognised vendor other than the registry’s (UPnP said Sony) stands too', async () => {
    const mac = '00:1F:16:66:00:02';
    const [{ deviceId }] = (await writer.recordDiscovery(scanId, [host('10.9.0.2', mac, 'Hon Hai Precision Ind. Co.,Ltd.')], at(0))).seen;
    await recognise(deviceId, 'Sony', 'upnp_manufacturer');
    await writer.recordDiscovery(scanId, [host('10.9.0.2', mac, 'Hon Hai Precision Ind. Co.,Ltd.')], at(1));
    expect(await vendorOf(deviceId)).toBe('Sony');
  });
});
