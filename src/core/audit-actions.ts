/** Every action the service writes to the audit log, with what it records. */
export const AUDIT_ACTIONS = {
  setup_completed: 'The first administrator was created (web set-up or environment bootstrap)',
  login_success: 'A user logged in',
  login_failed: 'A login was refused: unknown user or wrong password',
  login_throttled: 'A login was refused because of too many recent failures',
  logout: 'A user logged out',
  password_changed: 'A user changed their password; their other sessions were ended',
  password_reset: 'An operator reset a password from the command line',
  user_created: 'An operator created a user from the command line',
  api_key_created: 'An API key was created',
  api_key_revoked: 'An API key was revoked',
  api_key_rejected: 'A request presented an unknown, revoked or expired API key (throttled per client)',
  config_updated: 'The configuration was changed (old and new values of the changed keys)',
  device_updated: 'A device label, zone, trust flag, notes, status or watch changed (old and new values)',
  device_acknowledged: 'New devices were acknowledged (status new → known): one entry per device, `bulk` when acknowledged together',
  device_deleted: 'A device was deleted with its history (its address, MAC, name and status before)',
  devices_merged: 'Devices were merged into one (the kept device, the merged ones, the merge id to undo it)',
  merge_undone: 'A merge was undone: the merged devices and their rows were restored',
  scan_started: 'A scan was started (who, profile, subnet, engine)',
  scan_completed: 'A scan finished (devices found, duration)',
  scan_failed: 'A scan ended with an error, hit its time limit or was interrupted by a restart',
  scan_cancelled: 'A running scan was cancelled',
  scan_imported:
    'An nmap XML report was imported as a completed scan (subnet, devices found, hosts down, warnings, size, nmap version and arguments)',
  retention_run: 'The daily retention job deleted history older than retention.days (counts per kind)',
  backup_created: 'A backup of the whole database was taken (GET /api/backup or netwarden backup): file, tables and rows, or the error',
  restore_completed:
    'The data was replaced by a backup (netwarden restore); recorded in the restored data: file, when and by which version it was made',
  channel_created: 'A notification channel was created (name, type, its settings with secrets masked)',
  channel_updated: 'A notification channel was changed (old and new values, secrets masked)',
  channel_deleted: 'A notification channel was deleted with its delivery log',
  notification_failed: 'A notification could not be delivered after its last attempt (channel, delivery, event, error)',
  schedule_created: 'A scan schedule was created (name, cron, time zone, profile, subnet, enabled)',
  schedule_updated: 'A scan schedule was changed (old and new values of the changed fields)',
  schedule_deleted: 'A scan schedule was deleted (its queued run, if any, was cancelled)',
  schedule_run: 'A schedule recorded a run: a slot fired (actor system) or someone chose "run now" (scan id, slot)',
  schedule_skipped: 'A schedule slot was skipped: its previous run was still queued, or its pattern could not be read',
  agent_created: 'An agent was created (name, networks, token prefix)',
  agent_revoked: 'An agent was revoked: its token stops working, its queued and running scans fail',
  schedule_missed: 'Slots of a schedule passed without running (the service was down): first and last missed slot and how many, once per schedule',
} as const;

export type AuditAction = keyof typeof AUDIT_ACTIONS;

export const AUDIT_ACTION_NAMES = Object.keys(AUDIT_ACTIONS) as AuditAction[];
