/**
 * New devices and the inventory's upkeep (CONTRACT §15, §17, §18): acknowledging new devices (one
 * or many), deleting a device with its history, merging devices into one and undoing a merge.
 * Status and watch changes go through PUT /api/devices/{id} (routes/devices.ts), with the fields
 * defined here.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { SETTABLE_DEVICE_STATUSES } from '../../core/device-status.js';
import { OFFLINE_AFTER_SCANS } from '../../core/limits.js';
import { DeviceDetail, DeviceSummary } from '../../schemas/device.js';
import { audit } from '../audit.js';
import { HttpError, notFound } from '../errors.js';
import { Id, Nullable, StringEnum, errorResponses } from '../schemas.js';

/** `status` as PUT /api/devices/{id} takes it. */
export const DeviceStatusField = StringEnum(SETTABLE_DEVICE_STATUSES, {
  description:
    '`known` or `archived` (an archived device is left out of the default list, the stats and the alerts, and stays archived when seen again)',
});

/** `watch` as PUT /api/devices/{id} takes it: partial, merged into the device's. */
export const DeviceWatchField = Type.Object(
  {
    offline: Type.Optional(Type.Boolean({ description: 'Publish `device_offline` when it goes offline' })),
    online: Type.Optional(Type.Boolean({ description: 'Publish `device_online` when it comes back' })),
  },
  { additionalProperties: false, minProperties: 1, description: 'Partial: only the flags sent change' },
);

/** `presence` as PUT /api/devices/{id} takes it: the device's own offline threshold ("can sleep"), null to follow the setting. */
export const DevicePresenceField = Type.Object(
  {
    offline_after_scans: Nullable(
      Type.Integer({
        minimum: OFFLINE_AFTER_SCANS.min,
        maximum: OFFLINE_AFTER_SCANS.max,
        description: `Missed network scans in a row before this device counts as offline (${OFFLINE_AFTER_SCANS.min}–${OFFLINE_AFTER_SCANS.max}); null: presence.offline_after_scans applies`,
      }),
    ),
  },
  { additionalProperties: false, description: '"Can sleep": this device\'s own presence threshold' },
);

const DeviceIds = (what: string, max: number) =>
  Type.Array(Id, { minItems: 1, maxItems: max, uniqueItems: true, description: `${what} (1–${max}, no repeats)` });

export const deviceStatusRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store, events } = app.services;
  const cves = app.services.reevaluator.evaluator.cves;
  const detail = async (id: number) => (await store.devices.get(id, (cve) => cves.entry(cve))) as DeviceDetail;

  /** Acknowledges the devices (all must exist: else 404 listing the missing, nothing changed); audits and publishes each that changed. */
  async function acknowledge(request: FastifyRequest, ids: number[], bulk: boolean): Promise<DeviceSummary[]> {
    const found = await store.devices.summariesOf(ids);
    if (found.length !== ids.length) {
      const present = new Set(found.map((d) => d.id));
      const missing = ids.filter((id) => !present.has(id));
      throw new HttpError('NW_DEVICE_NOT_FOUND', `Devices not found: ${missing.join(', ')}`, { missing });
    }
    const changed = new Set(await store.devices.acknowledge(ids));
    const after = await store.devices.summariesOf(ids);
    for (const device of after) {
      if (!changed.has(device.id)) continue;
      const old = found.find((d) => d.id === device.id)!.status;
      await audit(request, {
        action: 'device_acknowledged',
        resourceType: 'device',
        resourceId: device.id,
        success: true,
        details: { ip_address: device.ip_address, status: { old, new: device.status }, ...(bulk ? { bulk: true } : {}) },
      });
      events.publish('device_updated', device);
    }
    return after;
  }

  app.post(
    '/api/devices/:device_id/acknowledge',
    {
      schema: {
        tags: ['devices'],
        summary: 'Acknowledge a device: its status becomes `known`',
        description:
          'A device first seen by a scan is `new` until acknowledged. Acknowledging an archived device brings it back as `known`; a known one stays as it is. ' +
          'Audited `device_acknowledged`; publishes `device_updated` when the status changed. Returns the full device.',
        params: Type.Object({ device_id: Id }),
        response: { 200: DeviceDetail, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const id = request.params.device_id;
      if (!(await store.devices.getRow(id))) throw notFound('Device');
      await acknowledge(request, [id], false);
      return detail(id);
    },
  );

  app.post(
    '/api/devices/acknowledge',
    {
      schema: {
        tags: ['devices'],
        summary: 'Acknowledge many devices at once',
        description:
          'All or nothing: when any id does not exist, nothing changes and the answer is 404 listing the missing ids (`missing`). ' +
          'Each device whose status changed gets its own `device_acknowledged` audit entry and `device_updated` event.',
        body: Type.Object({ device_ids: DeviceIds('Devices to acknowledge', 1000) }, { additionalProperties: false }),
        response: {
          200: Type.Object({
            acknowledged: Type.Integer({ description: 'Devices whose status changed to `known`' }),
            devices: Type.Array(DeviceSummary, { description: 'The devices as they are now, in id order' }),
          }),
          ...errorResponses(400, 401, 403, 404, 413, 415),
        },
      },
    },
    async (request) => {
      const before = await store.devices.summariesOf(request.body.device_ids);
      const devices = await acknowledge(request, request.body.device_ids, true);
      const acknowledged = devices.filter((d) => before.find((b) => b.id === d.id)?.status !== d.status).length;
      return { acknowledged, devices };
    },
  );

  app.delete(
    '/api/devices/:device_id',
    {
      schema: {
        tags: ['devices'],
        summary: 'Delete a device and its history',
        description:
          'Removes the device with its ports, findings, CVE matches, IP history, per-scan snapshots and changes. ' +
          'Seen again by a scan, it comes back as a `new` device. Audited `device_deleted`. Returns the device as it was.',
        params: Type.Object({ device_id: Id }),
        response: { 200: DeviceSummary, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const id = request.params.device_id;
      const [device] = await store.devices.summariesOf([id]);
      if (!device || !(await store.deviceMerges.deleteDevice(id))) throw notFound('Device');
      await audit(request, {
        action: 'device_deleted',
        resourceType: 'device',
        resourceId: id,
        success: true,
        details: {
          ip_address: device.ip_address,
          mac_address: device.mac_address,
          hostname: device.hostname,
          label: device.label,
          status: device.status,
        },
      });
      return device;
    },
  );

  app.post(
    '/api/devices/:device_id/merge',
    {
      schema: {
        tags: ['devices'],
        summary: 'Merge other devices into this one',
        description:
          'The devices in `device_ids` become this device: their ports, findings, CVE matches, IP history, snapshots and changes move to it ' +
          "(where both have the same port, address or scan, this device's row stays), its empty label, zone and notes are filled from theirs, " +
          'it keeps the earliest first sighting and watches what any of them watched; they are deleted. ' +
          'Returns the device and `merge_id`: POST /api/merges/{merge_id}/undo restores them as they were. ' +
          '404 when this device or any listed one does not exist (`missing` lists them); 400 when `device_ids` contains this device. Audited `devices_merged`.',
        params: Type.Object({ device_id: Id }),
        body: Type.Object({ device_ids: DeviceIds('Devices to merge into this one', 100) }, { additionalProperties: false }),
        response: {
          200: Type.Object({ device: DeviceDetail, merge_id: Type.Integer({ description: 'POST /api/merges/{merge_id}/undo undoes the merge' }) }),
          ...errorResponses(400, 401, 403, 404, 413, 415),
        },
      },
    },
    async (request) => {
      const keptId = request.params.device_id;
      const mergedIds = request.body.device_ids;
      const merged = await store.devices.summariesOf(mergedIds);
      const merge = await store.deviceMerges.merge(keptId, mergedIds, request.principal?.actor ?? null);
      const device = await detail(keptId);
      await audit(request, {
        action: 'devices_merged',
        resourceType: 'device',
        resourceId: keptId,
        success: true,
        details: {
          merge_id: merge.id,
          ip_address: device.ip_address,
          merged: merged.map((d) => ({ id: d.id, ip_address: d.ip_address, mac_address: d.mac_address, label: d.label })),
        },
      });
      for (const summary of await store.devices.summariesOf([keptId])) events.publish('device_updated', summary);
      return { device, merge_id: merge.id };
    },
  );

  app.post(
    '/api/merges/:merge_id/undo',
    {
      schema: {
        tags: ['devices'],
        summary: 'Undo a merge',
        description:
          'Restores the merged devices with their ids and every row the merge moved or removed, and the kept device as it was before the merge. ' +
          'Rows a later scan rewrote on the kept device stay with it. 404: no such merge. 409: already undone (`undone_at`); the kept device was deleted since; ' +
          'or a device created since holds the identity of a merged one (`conflicting_device_ids`: delete or merge it first). Audited `merge_undone`.',
        params: Type.Object({ merge_id: Id }),
        response: {
          200: Type.Object({
            merge_id: Type.Integer(),
            device: DeviceDetail,
            devices: Type.Array(DeviceSummary, { description: 'The restored devices, in id order' }),
          }),
          ...errorResponses(400, 401, 403, 404, 409),
        },
      },
    },
    async (request) => {
      const merge = await store.deviceMerges.undo(request.params.merge_id);
      const device = await detail(merge.deviceId);
      const devices = await store.devices.summariesOf(merge.mergedIds);
      await audit(request, {
        action: 'merge_undone',
        resourceType: 'device',
        resourceId: merge.deviceId,
        success: true,
        details: { merge_id: merge.id, restored: merge.mergedIds },
      });
      for (const summary of await store.devices.summariesOf([merge.deviceId, ...merge.mergedIds])) events.publish('device_updated', summary);
      return { merge_id: merge.id, device, devices };
    },
  );
};
