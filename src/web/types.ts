// Shapes of the JSON the API returns, as the UI uses them (see /openapi.json for the full description).

export type RiskLevel = 'critical' | 'high' | 'medium' | 'low' | 'none';
export type Severity = 'critical' | 'high' | 'medium' | 'low' | 'info';
export type ScanStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
export type ScanProfile = 'quick' | 'normal' | 'intensive';
export type ChangeType = 'device_added' | 'device_removed' | 'port_opened' | 'port_closed' | 'service_changed';

export const RISK_LEVELS: RiskLevel[] = ['critical', 'high', 'medium', 'low', 'none'];
export const SEVERITIES: Severity[] = ['critical', 'high', 'medium', 'low', 'info'];
export const SCAN_PROFILES: ScanProfile[] = ['quick', 'normal', 'intensive'];
export const CHANGE_TYPES: ChangeType[] = ['device_added', 'device_removed', 'port_opened', 'port_closed', 'service_changed'];

export interface Me {
  username: string;
  auth: 'session' | 'api_key';
  key_name?: string;
}

export interface DeviceSummary {
  id: number;
  ip_address: string;
  mac_address: string | null;
  mac_randomized: boolean;
  hostname: string | null;
  vendor: string | null;
  device_type: string | null;
  os_name: string | null;
  label: string | null;
  zone: string | null;
  is_trusted: boolean;
  notes: string | null;
  risk_level: RiskLevel;
  risk_score: number;
  open_ports: number[];
  first_seen: string;
  last_seen: string;
  last_scan_id: number | null;
  online: boolean;
}

export interface Port {
  port: number;
  protocol: string;
  state: string;
  service: string | null;
  product: string | null;
  version: string | null;
  extra_info: string | null;
  cpe: string[];
}

export interface Finding {
  port: number | null;
  protocol: string | null;
  severity: Severity;
  score: number;
  service: string | null;
  title: string;
  description: string;
  recommendation: string;
  cve_ids: string[];
}

export interface Cve {
  id: string;
  severity: Severity;
  cvss_score: number | null;
  description: string;
  remediation: string | null;
  references: string[];
  confidence: string;
  port: number | null;
  matched_product: string | null;
  matched_version: string | null;
}

export interface DeviceDetail extends DeviceSummary {
  ports: Port[];
  risk_details: { level: RiskLevel; score: number; summary: string | null; top_recommendation: string | null; findings: Finding[] };
  cves: Cve[];
  ip_history: { ip_address: string; first_seen: string; last_seen: string }[];
}

export interface Scan {
  scan_id: number;
  status: ScanStatus;
  profile: ScanProfile;
  subnet: string;
  scan_type: 'network' | 'device';
  /** The one address of a device scan; null for a network scan. */
  target: string | null;
  started_at: string | null;
  completed_at: string | null;
  duration_seconds: number | null;
  devices_found: number;
  error: string | null;
  triggered_by: string | null;
  /** Live progress while running; the last progress once finished. */
  progress: ScanProgress | null;
}

export interface ScanProgress {
  phase: string;
  percent: number;
  hosts_total: number | null;
  hosts_found: number;
  hosts_done: number;
  current_host: string | null;
  elapsed_seconds: number;
  eta_seconds: number | null;
}

export interface ScanState {
  scanning: boolean;
  scan_id: number | null;
  subnet: string | null;
  profile: ScanProfile | null;
  progress: ScanProgress | null;
}

export interface ScanDevice {
  device_id: number;
  ip_address: string;
  mac_address: string | null;
  hostname: string | null;
  vendor: string | null;
  os_name: string | null;
  open_ports: number[];
  risk_level: RiskLevel;
  risk_score: number;
}

export interface Change {
  id: number;
  scan_id: number;
  change_type: ChangeType;
  severity: Severity;
  device_id: number | null;
  device_ip: string | null;
  device_mac: string | null;
  port: number | null;
  protocol: string | null;
  old_value: string | null;
  new_value: string | null;
  description: string;
  detected_at: string;
}

export interface Stats {
  total_devices: number;
  devices_at_risk: number;
  critical: number;
  high: number;
  medium: number;
  low: number;
  online_devices: number;
  open_ports: number;
  total_scans: number;
  last_scan: string | null;
}

export interface TrendPoint {
  scan_id: number;
  timestamp: string;
  devices: number;
  at_risk: number;
  critical: number;
  high: number;
  open_ports: number;
  avg_risk_score: number;
  changes: number;
}

export interface ApiKey {
  id: number;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  status: 'active' | 'revoked' | 'expired';
}

export interface NewApiKey {
  id: number;
  name: string;
  key: string;
  prefix: string;
  created_at: string;
  expires_at: string | null;
}

export interface AuditEntry {
  id: number;
  timestamp: string;
  action: string;
  actor: string | null;
  actor_type: 'user' | 'api_key' | 'system';
  resource_type: string | null;
  resource_id: string | null;
  details: unknown;
  ip_address: string | null;
  user_agent: string | null;
  success: boolean;
}

export interface UpdateCheck {
  current_version: string;
  latest_version: string | null;
  update_available: boolean;
  release_url: string | null;
  release_notes: string | null;
  published_at: string | null;
  checked_at: string | null;
  error: string | null;
}

export interface NetworkDetection {
  local_ip: string | null;
  suggested_subnet: string | null;
  hostname: string;
  interfaces: { name: string; address: string; prefix_length: number; subnet: string; mac: string | null }[];
}

export interface Config {
  network: { subnet: string; exclude: string[]; resolve_hostnames: boolean };
  scanning: {
    port_range: string;
    engine: 'auto' | 'nmap' | 'native';
    default_profile: ScanProfile;
    max_hosts: number;
    scan_timeout_minutes: number;
    host_timeout_seconds: number;
    os_detection: boolean;
    risk_rules: unknown[];
  };
  zones: string[];
  updates: { enabled: boolean; feed_url: string; cache_minutes: number; token: string };
  server: { trust_proxy: boolean | string[]; session_hours: number; remember_days: number; secure_cookies: boolean };
}
