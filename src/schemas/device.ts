/**
 * A device as the API shows it: the summary in lists and the full record with ports, risk details,
 * CVEs and IP history. The one definition: route schemas, the store's return types and the
 * OpenAPI document all come from here.
 */
import { type Static, Type } from '@sinclair/typebox';
import { FACT_SOURCES } from '../core/model.js';
import { RISK_LEVELS } from '../core/severity.js';
import { Nullable, StringEnum, Timestamp } from './common.js';

const Severity = Type.String({ description: 'critical, high, medium, low or info' });

const deviceSummaryFields = {
  id: Type.Integer(),
  ip_address: Type.String(),
  mac_address: Nullable(Type.String()),
  mac_randomized: Type.Boolean({ description: 'The MAC is locally administered (randomised by the device)' }),
  hostname: Nullable(Type.String()),
  vendor: Nullable(Type.String()),
  device_type: Nullable(Type.String()),
  os_name: Nullable(Type.String()),
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
};

export const DeviceSummary = Type.Object(deviceSummaryFields);

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
    }),
  ),
  ip_history: Type.Array(Type.Object({ ip_address: Type.String(), first_seen: Timestamp, last_seen: Timestamp })),
});

export type DeviceSummary = Static<typeof DeviceSummary>;
export type DeviceDetail = Static<typeof DeviceDetail>;
export type PortRecord = DeviceDetail['ports'][number];
export type RiskDetails = DeviceDetail['risk_details'];
export type FindingRecord = RiskDetails['findings'][number];
export type CveRecord = DeviceDetail['cves'][number];
export type IpHistoryRecord = DeviceDetail['ip_history'][number];
