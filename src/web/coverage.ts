// What a device's "no risk" covers: the ports its latest scan examined. A green badge that only
// said "No risk" read as "safe" even after a quick scan, which checks no port at all.
//
// A scan record does not store its port list, so it is derived the way the scan manager chooses
// it: quick scans examine no ports, intensive scans all of them, normal scans the configured
// `scanning.port_range` and `scanning.top_ports` (as configured now; a changed setting shows the new list).
import { useEffect, useState } from 'preact/hooks';
import { api } from './api';
import type { Config, Scan } from './types';

export type Coverage = { scanned: false } | { scanned: true; ports: string };

/** Ranges shown in full; a longer list is summarised ("22, 80, 443 and 5 more"). */
const ENTRIES_SHOWN = 3;

/** "1-1000,8080" → "ports 1–1000, 8080"; every port → "all ports". */
export function describePorts(portRange: string): string {
  const entries = portRange
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length === 1 && /^(1|0)-65535$/.test(entries[0])) return 'all ports';
  const shown = entries.slice(0, ENTRIES_SHOWN).map((e) => e.replace('-', '–'));
  const more = entries.length - shown.length;
  const single = entries.length === 1 && !entries[0].includes('-');
  return `${single ? 'port' : 'ports'} ${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

/** What a normal scan examines: `scanning.port_range` and the `scanning.top_ports` most frequent ports. */
export function describeNormalPorts(scanning: { port_range: string; top_ports?: number }): string {
  const top = scanning.top_ports ?? 0;
  return `${describePorts(scanning.port_range)}${top > 0 ? ` and the ${top} most frequent` : ''}`;
}

/** What a scan with `profile` examined, given what a normal scan examines (describeNormalPorts). */
export function coverageOf(profile: string | null | undefined, normalPorts: string | null | undefined): Coverage | null {
  if (profile === 'quick') return { scanned: false };
  if (profile === 'intensive') return { scanned: true, ports: 'all ports' };
  if (profile === 'normal' && normalPorts) return { scanned: true, ports: normalPorts };
  return null;
}

// A scan's profile never changes: one request per scan per tab.
const profiles = new Map<number, Promise<string | null>>();

function profileOf(scanId: number): Promise<string | null> {
  let known = profiles.get(scanId);
  if (!known) {
    known = api<Scan>(`/api/scans/${scanId}`).then(
      (scan) => scan.profile,
      () => {
        profiles.delete(scanId); // Try again next time (a network blip, a scan removed by retention: null now).
        return null;
      },
    );
    profiles.set(scanId, known);
  }
  return known;
}

/** At most this many different scans are looked up for one page of devices. */
const SCANS_LOOKED_UP = 10;

/**
 * The coverage of each of the given scans (the devices' `last_scan_id`s), as a lookup. Until the
 * answers arrive, and for a scan that cannot be read, the lookup gives null: the badge then says
 * only "No risk", as before.
 */
export function useCoverage(scanIds: readonly (number | null)[], config?: Config): (scanId: number | null) => Coverage | null {
  const [portRange, setPortRange] = useState<string | null>(config ? describeNormalPorts(config.scanning) : null);
  const [known, setKnown] = useState<Map<number, string | null>>(new Map());
  const key = [...new Set(scanIds.filter((id): id is number => id !== null))].slice(0, SCANS_LOOKED_UP).join(',');

  useEffect(() => {
    if (config) {
      setPortRange(describeNormalPorts(config.scanning));
      return;
    }
    let current = true;
    api<Config>('/api/config').then(
      (c) => current && setPortRange(describeNormalPorts(c.scanning)),
      () => {},
    );
    return () => {
      current = false;
    };
  }, [config]);

  useEffect(() => {
    if (!key) return;
    let current = true;
    const ids = key.split(',').map(Number);
    void Promise.all(ids.map(async (id) => [id, await profileOf(id)] as const)).then((pairs) => {
      if (current) setKnown(new Map(pairs));
    });
    return () => {
      current = false;
    };
  }, [key]);

  return (scanId) => (scanId === null || !known.has(scanId) ? null : coverageOf(known.get(scanId), portRange));
}
