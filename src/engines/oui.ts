import { createRequire } from 'node:module';
import { isLocallyAdministered, ouiOf } from '../core/mac.js';

let registry: Record<string, string> | undefined;

/** Vendor name for a MAC from IEEE's OUI registry (the oui-data package), loaded on first use. */
export function vendorForMac(mac: string): string | null {
  if (isLocallyAdministered(mac)) return null;
  registry ??= createRequire(import.meta.url)('oui-data') as Record<string, string>;
  const entry = registry[ouiOf(mac)];
  return entry ? entry.split('\n')[0].trim() || null : null;
}
