/**
 * Accepted risk, zone policies, exploit intelligence and the cross-inventory findings list
 * (CONTRACT §17, §18): the one definition of their shapes for the routes, the store and the
 * OpenAPI document.
 */
import { type Static, Type } from '@sinclair/typebox';
import { FINDING_SEVERITIES } from '../core/severity.js';
import { Nullable, StringEnum, Timestamp } from './common.js';

const Day = Type.String({ format: 'date', description: 'YYYY-MM-DD' });

export const Kev = Nullable(
  Type.Object(
    {
      date_added: Nullable(Day),
      ransomware: Type.Boolean({ description: 'CISA knows of its use in ransomware campaigns' }),
      due_date: Nullable(Day),
    },
    {
      description:
        "In CISA's Known Exploited Vulnerabilities catalogue (`netwarden intel import`; the shipped dataset's KEV flag where no catalogue was imported, its dates then null); null when not known to be exploited",
    },
  ),
);

export const Epss = Nullable(
  Type.Object(
    {
      score: Type.Number({ minimum: 0, maximum: 1, description: 'Probability of exploitation in the next 30 days' }),
      percentile: Type.Number({ minimum: 0, maximum: 1 }),
      as_of: Day,
    },
    { description: 'FIRST EPSS score (`netwarden intel import`); null when no score was imported for it' },
  ),
);

export const AcceptanceRef = Nullable(
  Type.Object(
    {
      id: Type.Integer(),
      by: Type.String({ description: 'Who accepted it' }),
      reason: Type.String(),
      expires_at: Nullable(Timestamp),
      created_at: Timestamp,
    },
    { description: 'The finding is accepted: listed, but counts toward neither the level nor the score; null when not accepted' },
  ),
);

export const FindingKey = Type.String({
  minLength: 1,
  maxLength: 300,
  description: 'Stable key: `rule:<rule id>:<port>`, `cve:<CVE id>:<port>`, `policy:<zone>:<port>`; `/udp` appended for UDP ports, `-` for no port',
});

export const Acceptance = Type.Object({
  id: Type.Integer(),
  device_id: Type.Integer(),
  device_ip: Type.String(),
  device_name: Nullable(Type.String()),
  finding_key: FindingKey,
  title: Nullable(Type.String({ description: "The finding's title as the device has it now; null if the device no longer has it" })),
  severity: Nullable(Type.String()),
  reason: Type.String(),
  by: Type.String(),
  created_at: Timestamp,
  expires_at: Nullable(Timestamp),
});
export type Acceptance = Static<typeof Acceptance>;

export const FixedIn = Nullable(
  Type.String({
    description:
      "The lowest version that fixes this CVE for the detected version (the affected range's exclusive upper bound in the CVE data); " +
      'null when the data does not say (no upper bound, an inclusive one, or a version-independent entry) or the version was not read',
  }),
);

export const DETECTION_CONFIDENCES = ['confirmed', 'likely'] as const;

export const FindingListItem = Type.Object({
  finding_key: FindingKey,
  device_id: Type.Integer(),
  device_ip: Type.String(),
  device_name: Nullable(Type.String()),
  port: Nullable(Type.Integer()),
  protocol: Nullable(Type.String()),
  kind: StringEnum(['rule', 'cve', 'policy'] as const),
  severity: StringEnum(FINDING_SEVERITIES),
  title: Type.String(),
  cve_id: Nullable(Type.String({ description: 'The CVE of a `cve` finding' })),
  product: Nullable(Type.String({ description: 'The software on the port, as detected ("OpenSSH 8.9p1")' })),
  product_name: Nullable(Type.String({ description: 'The software without its version ("OpenSSH"): the Fix first page groups by it' })),
  fixed_in: FixedIn,
  confidence: Nullable(
    StringEnum(DETECTION_CONFIDENCES, {
      description:
        'How sure the detection of a `cve` finding is (null for rule and policy findings, which follow from the open port itself): ' +
        '`confirmed`: the product and version read from the service match an affected range; ' +
        '`likely`: the version came only from a banner that a distribution package may not have updated (back-ported fixes), ' +
        'or the scan cannot see the patch level: check the installed package before upgrading',
    }),
  ),
  confidence_reason: Nullable(Type.String({ description: 'Why `confidence` is what it is, in words; null with it' })),
  kev: Kev,
  epss: Epss,
  cvss_score: Nullable(Type.Number()),
  acceptance: AcceptanceRef,
});
export type FindingListItem = Static<typeof FindingListItem>;

const PolicyPort = Type.Union([Type.Integer({ minimum: 1, maximum: 65535 }), Type.String({ pattern: '^\\d{1,5}(/(tcp|udp))?$' })], {
  description: 'A port: `23` (TCP) or `"161/udp"`',
});

export const ZonePolicy = Type.Object(
  {
    forbidden_ports: Type.Array(PolicyPort, { maxItems: 1000 }),
    forbidden_services: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 1000, description: 'nmap service names, e.g. telnet' }),
    allowed_ports: Nullable(Type.Array(PolicyPort, { maxItems: 1000, description: 'Only these may be open; null: no allow-list' })),
    severity: StringEnum(FINDING_SEVERITIES),
  },
  { additionalProperties: false },
);

export const ZonePolicies = Type.Record(Type.String(), ZonePolicy, {
  description: "Zone name → policy. A device whose open port breaks its zone's policy gets a finding `policy:<zone>:<port>` with the zone's severity",
});

export const IntelSourceStatus = Type.Object({
  source: StringEnum(['kev', 'epss'] as const),
  imported_at: Nullable(Timestamp),
  as_of: Nullable(Day),
  age_days: Nullable(Type.Integer({ description: "Days since the data's date (or its import when it has none); null when never imported" })),
  entries: Type.Integer(),
  detail: Nullable(Type.String()),
});
export type IntelSourceStatus = Static<typeof IntelSourceStatus>;
