/**
 * A device as the API shows it: the summary in lists and the full record with ports, risk details,
 * CVEs and IP history. The one definition: route schemas, the store's return types and the
 * OpenAPI document all come from here.
 */
import { type Static, Type } from '@sinclair/typebox';
import { STALE_AFTER_SCANS } from '../core/coverage.js';
import { OFFLINE_AFTER_SCANS } from '../core/limits.js';
import { DEVICE_TYPES } from '../core/device-types.js';
import { FACT_SOURCES } from '../core/model.js';
import { RISK_LEVELS } from '../core/severity.js';
import { DEVICE_STATUSES } from '../core/device-status.js';
import { Nullable, StringEnum, Timestamp } from './common.js';
import { AcceptanceRef, Epss, FindingKey, FixedIn, Kev } from './risk.js';

/** "port scan", or "3 port scans": how many port scans make a port stale (core/coverage.ts). */
const LATEST_PORT_SCANS = STALE_AFTER_SCANS === 1 ? 'port scan' : `${String(STALE_AFTER_SCANS)} port scans`;

const Severity = Type.String({ description: 'critical, high, medium, low or info' });

const deviceSummaryFields = {
  id: Type.Integer(),
  ip_address: Type.String(),
  mac_address: Nullable(Type.String()),
  mac_randomized: Type.Boolean({ description: 'The MAC is locally administered (randomised by the device)' }),
  hostname: Nullable(Type.String()),
  vendor: Nullable(Type.String()),
  name: Nullable(
    Type.String({
      description: "The device's best name: its label when a person named it, else the name the probes found (mDNS, NetBIOS, SNMP, UPnP)",
    }),
  ),
  device_type: Nullable(
    Type.String({
      description: `What the device is: one of ${DEVICE_TYPES.join(', ')} (recognised from the scan's probes, or set by a person; see GET /api/devices/{id}/identity)`,
    }),
  ),
  type_confidence: Type.Integer({
    minimum: 0,
    maximum: 100,
    description: 'How sure recognition is of `device_type` (100: a person set it; 0: unknown)',
  }),
  model: Nullable(Type.String({ description: 'The model recognition found (UPnP, mDNS, SNMP, HTTP, TLS evidence)' })),
  os_name: Nullable(Type.String()),
  os_version: Nullable(Type.String({ description: 'The version of `os_name`, when recognition found one' })),
  label: Nullable(Type.String()),
  zone: Nullable(Type.String()),
  is_trusted: Type.Boolean(),
  notes: Nullable(Type.String()),
  risk_level: StringEnum(RISK_LEVELS),
  risk_score: Type.Integer({ minimum: 0, maximum: 100 }),
  open_ports: Type.Array(Type.Integer()),
  first_seen: Timestamp,
  last_seen: Timestamp,
  last_scan_id: Nullable(Type.Integer()),
  online: Type.Boolean({
    description: 'Present: seen by the latest completed scan, or missing from fewer consecutive network scans than presence.offline_after_scans',
  }),
  missed_scans: Type.Integer({
    minimum: 0,
    description: 'How many consecutive completed network scans of its address have not seen the device (0 when the latest one did)',
  }),
  ports_examined: Nullable(
    Type.String({
      description:
        "Every port whose state the inventory knows for this device: the ports the scans that reached it examined (GET /api/scans/{id} `ports_examined`'s format). " +
        'A risk level without finding covers these ports only. Null when no scan has examined its ports (discovery only)',
    }),
  ),
  ports_examined_at: Nullable(
    Type.String({
      format: 'date-time',
      description:
        'When the least recently examined of those ports was last examined: each of them was verified at this time or later (the device page lists which scan examined which). Null with `ports_examined`',
    }),
  ),
  status: StringEnum(DEVICE_STATUSES, {
    description:
      '`new`: first seen by a scan and not yet acknowledged (POST /api/devices/{id}/acknowledge); `known`; `archived`: left out of the default list, the stats and the alerts (exports keep it)',
  }),
  watch: Type.Object(
    {
      offline: Type.Boolean({ description: 'A `device_offline` event is published when the device goes offline' }),
      online: Type.Boolean({ description: 'A `device_online` event is published when the device comes back online' }),
    },
    { description: 'Which presence changes of this device are announced (PUT /api/devices/{id} `watch`)' },
  ),
  presence: Type.Object(
    {
      offline_after_scans: Nullable(
        Type.Integer({
          minimum: OFFLINE_AFTER_SCANS.min,
          maximum: OFFLINE_AFTER_SCANS.max,
          description:
            'This device\'s own presence.offline_after_scans ("can sleep": a phone missing one scan while asleep is not down): ' +
            'it goes offline only after this many consecutive completed network scans of its address missed it. Null: the setting applies',
        }),
      ),
    },
    { description: 'Per-device presence override (PUT /api/devices/{id} `presence`)' },
  ),
  stale_ports: Type.Integer({
    minimum: 0,
    description: `How many of its listed ports are stale (\`stale\` on the port: not examined by the latest ${LATEST_PORT_SCANS} that reached the device)`,
  }),
};

export const DeviceSummary = Type.Object({
  ...deviceSummaryFields,
  risk_reason: Type.Optional(
    Nullable(
      Type.String({
        description:
          'GET /api/devices?with_reasons=true only: why the device has its risk level, in a few words ("Telnet remote login exposed", "27 CVEs · 3 exploited"), ' +
          'from its open findings (accepted ones left out); null without open findings',
      }),
    ),
  ),
});

const FactSourceField = (fact: string) =>
  Nullable(
    StringEnum(FACT_SOURCES, {
      description:
        `Where ${fact} came from: \`scan\`, or the name source that filled it where the scans did not see it ` +
        '(`pihole`, `adguard`, `unifi`, `dhcp_leases`; see name_sources in the configuration); null without one',
    }),
  );

export const DeviceDetail = Type.Object({
  ...deviceSummaryFields,
  hostname_source: FactSourceField('the hostname'),
  mac_source: FactSourceField('the MAC address'),
  ports: Type.Array(
    Type.Object({
      port: Type.Integer(),
      protocol: Type.String(),
      state: Type.String(),
      service: Nullable(Type.String()),
      product: Nullable(Type.String()),
      version: Nullable(Type.String()),
      extra_info: Nullable(Type.String()),
      cpe: Type.Array(Type.String()),
      last_verified_at: Nullable(
        Type.String({
          format: 'date-time',
          description: 'When a scan last examined this port on the device (its state is as that scan found it); null when not recorded',
        }),
      ),
      verified_by_scan_id: Nullable(Type.Integer({ description: 'The scan that last examined it; null when not recorded' })),
      stale: Type.Boolean({
        description:
          `The latest ${LATEST_PORT_SCANS} that reached the device did not examine this port (a narrower port list): ` +
          'it is listed with its last known state, verified at `last_verified_at`, and is never dropped for that',
      }),
      description: Type.Optional(
        Nullable(
          Type.String({
            description:
              'What answers on the port in plain words, beside nmap\'s service name: "web server (Apache httpd 2.4.49)", ' +
              '"unidentified service (nmap guesses blackice-icecap)" when the name is only the port number\'s usual service. Null when there is nothing to add',
          }),
        ),
      ),
    }),
  ),
  risk_details: Type.Object({
    level: StringEnum(RISK_LEVELS),
    score: Type.Integer(),
    summary: Nullable(Type.String()),
    top_recommendation: Nullable(Type.String()),
    findings: Type.Array(
      Type.Object({
        finding_key: FindingKey,
        kind: StringEnum(['rule', 'cve', 'policy'] as const, { description: 'A risk rule, a CVE, or the zone policy' }),
        acceptance: AcceptanceRef,
        port: Nullable(Type.Integer()),
        protocol: Nullable(Type.String()),
        severity: Severity,
        score: Type.Integer({ description: 'What this finding added to the device score' }),
        service: Nullable(Type.String()),
        title: Type.String(),
        description: Type.String(),
        recommendation: Type.String(),
        cve_ids: Type.Array(Type.String()),
      }),
    ),
  }),
  cves: Type.Array(
    Type.Object({
      id: Type.String(),
      severity: Severity,
      cvss_score: Nullable(Type.Number()),
      description: Type.String(),
      remediation: Nullable(Type.String()),
      references: Type.Array(Type.String()),
      confidence: Type.String({ description: '`confirmed` (product and version match) or `likely`' }),
      port: Nullable(Type.Integer()),
      matched_product: Nullable(Type.String()),
      matched_version: Nullable(Type.String()),
      fixed_in: FixedIn,
      kev: Kev,
      epss: Epss,
    }),
  ),
  ip_history: Type.Array(Type.Object({ ip_address: Type.String(), first_seen: Timestamp, last_seen: Timestamp })),
  coverage: Type.Array(
    Type.Object({
      scan_id: Type.Integer(),
      ports_examined: Type.String({
        description: 'The ports this scan was the last to examine on the device (format of GET /api/scans/{id} `ports_examined`)',
      }),
      examined_at: Timestamp,
    }),
    {
      description:
        "Which scan last examined which of the device's ports, and when, newest first: together, `ports_examined`. A risk summary without finding names these",
    },
  ),
});

export type DeviceSummary = Static<typeof DeviceSummary>;
export type DeviceDetail = Static<typeof DeviceDetail>;
export type PortRecord = DeviceDetail['ports'][number];
export type RiskDetails = DeviceDetail['risk_details'];
export type FindingRecord = RiskDetails['findings'][number];
export type CveRecord = DeviceDetail['cves'][number];
export type IpHistoryRecord = DeviceDetail['ip_history'][number];

/** GET /api/devices/{id}/identity (CONTRACT §15). */
export const DeviceIdentity = Type.Object({
  keys: Type.Array(
    Type.Object({
      kind: Type.String({
        description:
          'mac, ssh_host_key, tls_certificate, upnp_udn, mdns_name, netbios_name, dhcp_client_id, snmp_engine_id, hostname or ip. A strong key (SSH host key, certificate key, UDN, engine ID, global MAC) belongs to one device only',
      }),
      value: Type.String(),
      source: Type.String({ description: 'The probe or record it came from: scan, ssh, tls, ssdp, mdns, netbios, snmp, dns, a name source' }),
      first_seen: Timestamp,
      last_seen: Timestamp,
    }),
  ),
  evidence: Type.Array(
    Type.Object({
      field: Type.String({ description: 'name, device_type, vendor, model, os_name, os_version or cpe' }),
      value: Type.String(),
      source: Type.String({
        description:
          'What said so: mdns, ssdp, snmp, netbios, http_title, http_server, tls, ssh, nmap_os, oui, ports, hostname, or user (a person set it; scans never change it)',
      }),
      detail: Type.String({ description: 'The observation in words, as a person checks it' }),
      confidence: Type.Integer({ minimum: 0, maximum: 100 }),
      observed_at: Timestamp,
    }),
    { description: 'What the latest recognition read (values a person set first); hits that lost to stronger evidence are listed too' },
  ),
  decisions: Type.Array(
    Type.Object({
      scan_id: Nullable(Type.Integer()),
      rule: Type.String({ description: 'new_device, address_changed, recognition, strong_key_held' }),
      explanation: Type.String(),
      at: Timestamp,
    }),
    { description: 'Newest first' },
  ),
});
export type DeviceIdentity = Static<typeof DeviceIdentity>;
