/**
 * Recognition of the hosts a scan reached (issue 21, CONTRACT §15): after the port scan, the
 * recognition probes (src/probes/) ask each host, unicast, what it is; their answers, the MAC's
 * vendor, the host name, the open ports and nmap's OS match go through core/recognition.ts; the
 * identity keys (core/identity-keys.ts), the evidence, the recognised fields and the decisions
 * are what the recorder stores (store/identity.ts). Hosts are probed a few at a time, each within
 * its time bound, and a cancel stops the lot: whatever answered by then is used.
 */
import { isOpenPort, type ScannedHost } from '../core/model.js';
import type { NmapOsMatch, ProbeResults } from '../core/probe-results.js';
import { identityKeysOf } from '../core/identity-keys.js';
import { reasonOf, recognise } from '../core/recognition.js';
import type { Settings } from '../core/settings.js';
import type { ProbeRunOptions } from '../probes/index.js';
import { DEFAULT_PROBE_SETTINGS } from '../probes/settings.js';
import type { DeviceRecognitionRecord } from '../store/identity.js';

export type { ProbeRunOptions };

/** Hosts probed at once (each runs up to eight probes of its own). */
const HOSTS_AT_ONCE = 16;

/** nmap reports only its best OS match's name and class here: taken as this sure. */
const NMAP_OS_ACCURACY = 85;

/** A host with what the recognition probes learned where the scan ran (an agent's upload carries it); absent otherwise. */
export type ProbedHost = ScannedHost & { probes?: ProbeResults };

/** One host as the scan recorded it: its device and what the scan saw. */
export interface IdentifyTarget {
  deviceId: number;
  host: ProbedHost;
  /** Decisions about the device already made by this scan (new device, address change). */
  decisions?: { rule: string; explanation: string }[];
}

export interface IdentifyOptions {
  /** Run the probes (false: recognise from what the scan itself saw, and the probe results an agent uploaded with each host). */
  probe: boolean;
  signal?: AbortSignal;
  probeOptions?: ProbeRunOptions;
}

/** Probes and recognises every target; returns what to record, in the targets' order. */
export async function identifyHosts(
  targets: readonly IdentifyTarget[],
  settings: Pick<Settings, 'recognition'>,
  options: IdentifyOptions,
): Promise<DeviceRecognitionRecord[]> {
  return (await identifyHostsWithProbes(targets, settings, options)).records;
}

/** identifyHosts, with the probe results each target was recognised from (by address): the switches' tables are in them. */
export async function identifyHostsWithProbes(
  targets: readonly IdentifyTarget[],
  settings: Pick<Settings, 'recognition'>,
  options: IdentifyOptions,
): Promise<{ records: DeviceRecognitionRecord[]; probes: Map<string, ProbeResults> }> {
  const probes = options.probe
    ? await probeHosts(
        targets.map((t) => t.host),
        settings.recognition,
        options.signal,
        options.probeOptions,
      )
    : new Map<string, ProbeResults>();
  // Without probes here, what the host's own scan probed (an agent's upload carries its probe results).
  const used = new Map<string, ProbeResults>();
  const records = targets.map((target) => {
    const results = probes.get(target.host.ip) ?? target.host.probes ?? {};
    used.set(target.host.ip, results);
    return recognitionOf(target, results);
  });
  return { records, probes: used };
}

/**
 * Runs the recognition probes on each host (unicast, a few hosts at a time, each within its time
 * bound; a cancel stops the lot: whatever answered by then is returned). The server runs them
 * after its own scans' port phase, an agent after its (src/agent/runtime.ts), on the hosts its
 * scan reached. Results by address; a host that answered nothing has an empty record.
 */
export async function probeHosts(
  hosts: readonly Pick<ScannedHost, 'ip' | 'ports'>[],
  recognition: Settings['recognition'],
  signal?: AbortSignal,
  probeOptions?: ProbeRunOptions,
): Promise<Map<string, ProbeResults>> {
  const out = new Map<string, ProbeResults>();
  if (recognition.probes.length === 0) return out;
  const probeSettings = { ...DEFAULT_PROBE_SETTINGS, probes: recognition.probes, snmp_communities: recognition.snmp_communities };
  // Loaded when a scan first probes: the probes' libraries (SNMP, mDNS, XML) are megabytes of heap an idle service does not need.
  const { runProbes } = await import('../probes/index.js');
  let next = 0;
  const worker = async () => {
    while (next < hosts.length && !signal?.aborted) {
      const host = hosts[next++];
      const openTcpPorts = host.ports.filter((p) => p.protocol === 'tcp' && isOpenPort(p)).map((p) => ({ port: p.port, service: p.service }));
      const openUdpPorts = host.ports.filter((p) => p.protocol === 'udp' && isOpenPort(p)).map((p) => p.port);
      const closedUdpPorts = host.ports.filter((p) => p.protocol === 'udp' && p.state === 'closed').map((p) => p.port);
      out.set(host.ip, await runProbes({ ip: host.ip, openTcpPorts, openUdpPorts, closedUdpPorts }, probeSettings, signal, probeOptions));
    }
  };
  await Promise.all(Array.from({ length: Math.min(HOSTS_AT_ONCE, hosts.length) }, worker));
  return out;
}

/** What to record about one host from its probe results. */
export function recognitionOf(target: IdentifyTarget, probes: ProbeResults): DeviceRecognitionRecord {
  const { host } = target;
  const nmapOs: NmapOsMatch[] = host.os_name
    ? [{ name: host.os_name, accuracy: NMAP_OS_ACCURACY, vendor: null, family: null, generation: null, type: host.device_type, cpe: [] }]
    : [];
  const recognition = recognise({
    probes,
    mac: host.mac,
    ouiVendor: host.vendor,
    hostname: host.hostname,
    openPorts: host.ports
      .filter(isOpenPort)
      .map((p) => ({ port: p.port, protocol: p.protocol, service: p.service, product: p.product, version: p.version })),
    nmapOs,
  });
  const keys = identityKeysOf({
    ip: host.ip,
    mac: host.mac,
    macSource: host.mac_source ?? 'scan',
    hostname: host.hostname,
    hostnameSource: host.hostname_source ?? 'dns',
    probes,
  });
  const names = discoveredNames(probes);
  const chosenCpes = new Set(recognition.cpes);
  return {
    deviceId: target.deviceId,
    keys,
    fields: {
      device_type: recognition.device_type,
      type_confidence: recognition.type_confidence,
      vendor: recognition.vendor,
      model: recognition.model,
      // nmap's own OS match, when the scan has one, is more precise than a family ("Linux 5.0 - 5.2"): it stands.
      os_name: host.os_name ? null : recognition.os_name,
      os_version: recognition.os_version,
      discovered_name: names[0]?.value ?? null,
    },
    evidence: [
      ...names.map((n) => ({ field: 'name', value: n.value, source: n.source, detail: n.detail, confidence: n.confidence })),
      // A CPE stays on the record only when recognition chose it (it agrees with what the device was
      // recognised as): CVE matching reads these (store/evaluation.ts cpesOf).
      ...recognition.evidence.filter((e) => e.field !== 'cpe' || chosenCpes.has(e.value)).map(({ rule: _rule, ...e }) => e),
    ],
    reason: reasonOf(recognition),
    decisions: target.decisions ?? [],
  };
}

interface NameEvidence {
  value: string;
  source: string;
  detail: string;
  confidence: number;
}

/** The names the device gives itself, the one a person would recognise first. */
export function discoveredNames(probes: ProbeResults): NameEvidence[] {
  const out: NameEvidence[] = [];
  const add = (value: string | null | undefined, source: string, detail: string, confidence: number) => {
    const v = value?.trim();
    if (v && !out.some((n) => n.value.toLowerCase() === v.toLowerCase())) out.push({ value: v, source, detail, confidence });
  };
  const mdns = probes.mdns?.names[0];
  if (mdns) add(mdns.replace(/\.local$/i, ''), 'mdns', `mDNS name "${mdns}"`, 80);
  add(probes.ssdp?.friendlyName, 'ssdp', `UPnP friendlyName "${probes.ssdp?.friendlyName ?? ''}"`, 75);
  add(probes.snmp?.sysName, 'snmp', `SNMP sysName "${probes.snmp?.sysName ?? ''}"`, 70);
  add(probes.netbios?.name, 'netbios', `NetBIOS name "${probes.netbios?.name ?? ''}"`, 65);
  return out;
}
