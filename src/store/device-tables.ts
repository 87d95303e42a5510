/**
 * The tables that hold a device's history, each row belonging to one device by `device_id`: the one
 * list deleting a device (store/device-merge.ts deleteDevice) and merging devices (mergeDevices,
 * undoMerge) go through, so a table added here is deleted and merged with its device. A table of
 * device-owned rows that is not listed here would keep rows of a deleted device.
 *
 * `unique`: the columns that, with `device_id`, identify a row (the table's unique constraint);
 * where a merged device's row would collide with the kept device's, the kept device's row stays
 * and the other's is removed (and restored by an undo).
 */
export const DEVICE_TABLES = [
  { table: 'ports', unique: ['port', 'protocol'] },
  { table: 'risk_findings', unique: [] },
  { table: 'cve_matches', unique: [] },
  { table: 'ip_history', unique: ['ip_address'] },
  { table: 'device_snapshots', unique: ['scan_id'] },
  { table: 'changes', unique: [] },
  // Identity (migration 015): a strong key belongs to one device, so the kept device's copy wins.
  { table: 'device_identity_keys', unique: ['kind', 'value'] },
  { table: 'device_evidence', unique: [] },
  { table: 'identity_decisions', unique: [] },
  // Switch and access-point links (migration 021), by the device below; one per source. The rows
  // naming a device as the parent (`parent_device_id`) are handled by device-merge.ts itself.
  { table: 'device_links', unique: ['source'] },
] as const satisfies readonly { table: string; unique: readonly string[] }[];

export type DeviceTable = (typeof DEVICE_TABLES)[number]['table'];
