/**
 * A device's place in the user's daily loop (CONTRACT §17, §18): `new` from its first sighting
 * until someone acknowledges it, then `known`; `archived` hides it from the default list, the
 * stats and the alerts (it stays in exports, with its status). Imports nothing, so the web UI may
 * import it.
 */
export const DEVICE_STATUSES = ['new', 'known', 'archived'] as const;
export type DeviceStatus = (typeof DEVICE_STATUSES)[number];

/** The statuses a person may set (`PUT /api/devices/{id}`): `new` is only ever given by the service. */
export const SETTABLE_DEVICE_STATUSES = ['known', 'archived'] as const;
export type SettableDeviceStatus = (typeof SETTABLE_DEVICE_STATUSES)[number];
