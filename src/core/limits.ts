/**
 * Limits the server enforces and the web UI states in its forms (input attributes, hints): one
 * definition for both. The route and settings schemas import them, and so does the browser
 * bundle (src/web/), which is why this module imports nothing and does no I/O.
 */

/**
 * Shown instead of a secret value (settings' passwords and tokens, channels' secrets and secret
 * URLs); sending it back in an update keeps the stored secret.
 */
export const SECRET_MASK = '********';

/** Inclusive range of a number the API accepts. */
export interface Range {
  readonly min: number;
  readonly max: number;
}

// Accounts ------------------------------------------------------------------------------------

export const USERNAME_MIN_LENGTH = 3;
export const USERNAME_MAX_LENGTH = 64;
/** What a username may be made of, as a pattern for schemas and RegExp alike. */
export const USERNAME_PATTERN = `^[A-Za-z0-9._-]{${USERNAME_MIN_LENGTH},${USERNAME_MAX_LENGTH}}$`;

export const PASSWORD_MIN_LENGTH = 10;
/** Long enough for any passphrase, short enough that hashing one costs nothing unusual. */
export const PASSWORD_MAX_LENGTH = 1024;

// API keys ------------------------------------------------------------------------------------

export const API_KEY_NAME_MAX_LENGTH = 100;

// Agents (CONTRACT §12) -------------------------------------------------------------------------

/** An agent's name: 1–100 characters, unique. */
export const AGENT_NAME_MAX_LENGTH = 100;
/** How many networks one agent scans. */
export const AGENT_NETWORKS_MAX_ITEMS = 64;
/** An agent not heard from for this long is offline (it long-polls for work every 25 s). */
export const AGENT_OFFLINE_AFTER_SECONDS = 60;
/** How long `POST /api/agent/jobs/next` waits for a scan before answering 204. */
export const AGENT_POLL_WAIT_SECONDS = 25;
/**
 * The largest results upload an agent may send: a /16 (65,536 hosts), every one with a handful
 * of ports and their services, is well under half of it.
 */
export const AGENT_UPLOAD_MAX_BYTES = 128 * 1024 * 1024;
/** Hosts in one upload: a /16. */
export const AGENT_UPLOAD_MAX_HOSTS = 65_536;

// Devices and zones ---------------------------------------------------------------------------

export const DEVICE_LABEL_MAX_LENGTH = 200;
export const DEVICE_NOTES_MAX_LENGTH = 10_000;

/** Longest reason of an acceptance of risk (CONTRACT §18: 1–500 characters); the UI's form shares it. */
export const ACCEPTANCE_REASON_MAX_LENGTH = 500;
/** The free-text search of the device list (`q`). */
export const DEVICE_SEARCH_MAX_LENGTH = 200;
/** Rows an export (GET /api/export/…, `netwarden export`) reads from the database per page; one page is held at a time. */
export const EXPORT_PAGE_SIZE = 1000;
export const ZONE_NAME_MAX_LENGTH = 40;

// Configuration -------------------------------------------------------------------------------

/** scanning.host_timeout_seconds: how long one device may take before a scan moves on. */
export const HOST_TIMEOUT_SECONDS: Range = { min: 5, max: 3600 };
/** scanning.max_parallel_scans: scans of non-overlapping targets running at once (CONTRACT §12). */
export const MAX_PARALLEL_SCANS: Range = { min: 1, max: 16 };
/** retention.days; 0 keeps everything. */
export const RETENTION_DAYS: Range = { min: 0, max: 36_500 };
/** Entries in network.exclude and in scanning.allowed_targets. */
export const ADDRESS_LIST_MAX_ITEMS = 256;

// Ports ---------------------------------------------------------------------------------------

/** TCP and UDP port numbers, in port lists (`1-1000`, `22,80,8000-8100`) and risk rules. */
export const PORTS: Range = { min: 1, max: 65_535 };
/** scanning.top_ports: how many of the most frequent TCP ports the normal profile adds to port_range; 0 adds none. */
export const TOP_PORTS: Range = { min: 0, max: 65_535 };
/**
 * Most UDP ports scanning.udp_ports may list: a silent UDP port costs a timeout and retries (no
 * answer is the usual case), so a long list would make every normal scan slow.
 */
export const MAX_UDP_PORTS = 1024;

// Schedules -----------------------------------------------------------------------------------

/** A schedule's name (CONTRACT §7: 1–100 characters, unique). */
export const SCHEDULE_NAME_MAX_LENGTH = 100;
/** How many upcoming run times GET /api/schedules/preview lists (`count`). */
export const SCHEDULE_PREVIEW_COUNT: Range = { min: 1, max: 20 };
/** presence.offline_after_scans: consecutive missed network scans before a device counts as gone. */
export const OFFLINE_AFTER_SCANS: Range = { min: 1, max: 100 };

// Imports -------------------------------------------------------------------------------------

/** The largest nmap XML report POST /api/scans/import accepts (CONTRACT §11: 50 MiB; beyond it 413). */
export const NMAP_REPORT_MAX_BYTES = 50 * 1024 * 1024;

// Scan results from outside (imported reports, agents' uploads: CONTRACT §14) -----------------------
// Every one is checked by core/scan-input.ts; a value beyond these is refused (400 naming it).

/** A hostname: the longest DNS name. Line breaks and control characters are removed, never stored. */
export const HOSTNAME_MAX_LENGTH = 253;
/** A port's product, version and extra information (nmap's `product`, `version`, `extrainfo`). */
export const SERVICE_TEXT_MAX_LENGTH = 256;
/** A port's service name (nmap's `name`: `http`, `ssh`, …). */
export const SERVICE_NAME_MAX_LENGTH = 100;
/** A port's state (`open`, `closed|filtered`, …). */
export const PORT_STATE_MAX_LENGTH = 40;
/** A MAC vendor, an OS name. */
export const HOST_TEXT_MAX_LENGTH = 200;
/** A device type (`general purpose`, `router`, …). */
export const DEVICE_TYPE_MAX_LENGTH = 100;
/** One CPE name, and how many one port may carry. */
export const CPE_MAX_LENGTH = 300;
export const CPE_MAX_ITEMS = 32;
/** The output of one NSE script of a report (`<script output="…">`): a long vulners list fits. */
export const SCRIPT_OUTPUT_MAX_LENGTH = 64 * 1024;
/** Port results one host may list (every TCP and every UDP port). */
export const HOST_PORTS_MAX_ITEMS = 2 * 65_535;
