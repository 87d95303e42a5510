/**
 * What kind of thing a device is: CONTRACT §15's `device_type` list, defined once, with what the
 * UI shows for each (a label and an icon) and which types are more specific forms of others
 * (a camera is an IoT device), which recognition uses to let agreeing evidence add up.
 * Imports nothing, so the web UI may import it too.
 */

export const DEVICE_TYPES = [
  'router',
  'firewall',
  'switch',
  'access_point',
  'nas',
  'server',
  'workstation',
  'laptop',
  'phone',
  'tablet',
  'tv',
  'media_player',
  'speaker',
  'camera',
  'printer',
  'smart_home',
  'iot',
  'game_console',
  'hypervisor',
  'virtual_machine',
  'unknown',
] as const;

export type DeviceType = (typeof DEVICE_TYPES)[number];

export interface DeviceTypeInfo {
  /** Singular, capitalised as at the start of a sentence: "Access point". */
  label: string;
  /** Plural, for filters and counts: "Access points". */
  plural: string;
  /**
   * An SVG path (`d`) for a 24×24 viewBox, drawn with a stroke and no fill, like the UI's other
   * icons: the UI draws it beside the device's name.
   */
  icon: string;
  /** Types this one is a more specific form of: evidence for those supports this one. */
  broader: readonly DeviceType[];
}

export const DEVICE_TYPE_INFO: Readonly<Record<DeviceType, DeviceTypeInfo>> = {
  router: {
    label: 'Router',
    plural: 'Routers',
    icon: 'M3 14h18v5H3zM7 16.5h.01M11 16.5h.01M8 14V9M16 14V9M5 7a10 10 0 0 1 14 0',
    broader: [],
  },
  firewall: {
    label: 'Firewall',
    plural: 'Firewalls',
    icon: 'M3 5h18v14H3zM3 9.7h18M3 14.3h18M9 5v4.7M15 9.7v4.6M9 14.3V19',
    broader: ['router'],
  },
  switch: {
    label: 'Switch',
    plural: 'Switches',
    icon: 'M2 9h20v6H2zM5 12h2M9 12h2M13 12h2M17 12h2',
    broader: [],
  },
  access_point: {
    label: 'Access point',
    plural: 'Access points',
    icon: 'M12 20a1 1 0 1 0 0-.01M8.5 15.5a5 5 0 0 1 7 0M5.5 12.5a9.5 9.5 0 0 1 13 0M2.5 9.5a14 14 0 0 1 19 0',
    broader: [],
  },
  nas: {
    label: 'NAS',
    plural: 'NAS devices',
    icon: 'M5 3h14v18H5zM5 9h14M5 15h14M8 6h.01M8 12h.01M8 18h.01',
    broader: ['server'],
  },
  server: {
    label: 'Server',
    plural: 'Servers',
    icon: 'M3 4h18v7H3zM3 13h18v7H3zM7 7.5h.01M7 16.5h.01M11 7.5h6M11 16.5h6',
    broader: [],
  },
  workstation: {
    label: 'Computer',
    plural: 'Computers',
    icon: 'M3 4h18v12H3zM8 20h8M12 16v4',
    broader: [],
  },
  laptop: {
    label: 'Laptop',
    plural: 'Laptops',
    icon: 'M5 5h14v10H5zM2 19h20l-3-4H5z',
    broader: ['workstation'],
  },
  phone: {
    label: 'Phone',
    plural: 'Phones',
    icon: 'M7 2h10v20H7zM11 18.5h2',
    broader: [],
  },
  tablet: {
    label: 'Tablet',
    plural: 'Tablets',
    icon: 'M4 3h16v18H4zM11 18h2',
    broader: [],
  },
  tv: {
    label: 'TV',
    plural: 'TVs',
    icon: 'M2 5h20v12H2zM7 21h10M12 17v4',
    broader: ['media_player', 'iot'],
  },
  media_player: {
    label: 'Media player',
    plural: 'Media players',
    icon: 'M3 7h18v10H3zM10 9.5v5l4-2.5z',
    broader: ['iot'],
  },
  speaker: {
    label: 'Speaker',
    plural: 'Speakers',
    icon: 'M6 2h12v20H6zM12 14.5a3 3 0 1 0 0 .01M12 6h.01',
    broader: ['media_player', 'iot'],
  },
  camera: {
    label: 'Camera',
    plural: 'Cameras',
    icon: 'M2 7h14v10H2zM16 10.5l6-3.5v10l-6-3.5',
    broader: ['iot'],
  },
  printer: {
    label: 'Printer',
    plural: 'Printers',
    icon: 'M6 9V3h12v6M6 18H3v-9h18v9h-3M6 14h12v7H6z',
    broader: ['iot'],
  },
  smart_home: {
    label: 'Smart home',
    plural: 'Smart home devices',
    icon: 'M3 11l9-8 9 8M5 9.5V21h14V9.5M10 21v-6h4v6',
    broader: ['iot'],
  },
  iot: {
    label: 'IoT device',
    plural: 'IoT devices',
    icon: 'M7 7h10v10H7zM10 3v4M14 3v4M10 17v4M14 17v4M3 10h4M3 14h4M17 10h4M17 14h4',
    broader: [],
  },
  game_console: {
    label: 'Game console',
    plural: 'Game consoles',
    icon: 'M6 8h12a4 4 0 0 1 0 8H6a4 4 0 0 1 0-8zM6 12h4M8 10v4M15 11h.01M17 13h.01',
    broader: [],
  },
  hypervisor: {
    label: 'Hypervisor',
    plural: 'Hypervisors',
    icon: 'M3 3h18v18H3zM6 6h5v5H6zM13 6h5v5h-5zM6 13h5v5H6zM13 13h5v5h-5z',
    broader: ['server'],
  },
  virtual_machine: {
    label: 'Virtual machine',
    plural: 'Virtual machines',
    icon: 'M4 4h16v16H4zM8 8h8v8H8z',
    broader: [],
  },
  unknown: {
    label: 'Unknown',
    plural: 'Unknown devices',
    icon: 'M12 21a9 9 0 1 0 0-18 9 9 0 0 0 0 18zM9.5 9a2.5 2.5 0 1 1 3.5 2.3c-.6.3-1 .9-1 1.6v.6M12 17h.01',
    broader: [],
  },
};

export function isDeviceType(value: unknown): value is DeviceType {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(DEVICE_TYPE_INFO, value);
}

/** True when `specific` is `general` or a more specific form of it (a `camera` is an `iot`). */
export function isFormOf(specific: DeviceType, general: DeviceType): boolean {
  return specific === general || DEVICE_TYPE_INFO[specific].broader.includes(general);
}
