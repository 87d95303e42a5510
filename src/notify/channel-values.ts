/**
 * A channel from an API request: a new one from POST, or the stored one changed by a partial
 * PUT (deep-merged), checked as a whole. Problems name the field (`config.url: …`,
 * `digest: …`, `quiet_hours.timezone: …`, `filters.zones.0: …`). And the channel as the API shows
 * it, secrets masked.
 */
import { checkQuietHours, defaultFilters, parseCron, type Checked, type QuietHours } from '../core/notify-rules.js';
import type { Channel, ChannelCreate, ChannelUpdate } from '../schemas/notification.js';
import type { ChannelValues, StoredChannel } from '../store/notifications.js';
import { createConfig, maskConfig, updateConfig } from './channel-config.js';
import { DRIVERS } from './channels/index.js';

export function showChannel(channel: StoredChannel): Channel {
  const { digest_last_slot: _slot, ...shown } = channel;
  return { ...shown, config: maskConfig(DRIVERS[channel.type], channel.config) };
}

function checkName(name: string): Checked<string> {
  const trimmed = name.trim();
  return trimmed ? { ok: true, value: trimmed } : { ok: false, error: 'name: must not be blank' };
}

function checkZones(zones: string[] | null, knownZones: string[]): string | null {
  if (!zones) return null;
  for (const [i, zone] of zones.entries()) {
    if (!knownZones.includes(zone)) return `filters.zones.${i}: unknown zone "${zone}"; must be one of ${knownZones.join(', ')}`;
  }
  return null;
}

function checkSchedule(digest: string | null, quiet: Partial<QuietHours> | null): Checked<{ digest: string | null; quiet_hours: QuietHours | null }> {
  let quiet_hours: QuietHours | null = null;
  if (quiet) {
    const q = checkQuietHours(quiet);
    if (!q.ok) return q;
    quiet_hours = q.value;
  }
  if (digest !== null) {
    const cron = parseCron(digest, quiet_hours?.timezone ?? 'UTC');
    if (!cron.ok) return { ok: false, error: `digest: ${cron.error}` };
    digest = digest.trim().split(/\s+/).join(' ');
  }
  return { ok: true, value: { digest, quiet_hours } };
}

export function channelFromCreate(body: ChannelCreate, knownZones: string[], now: string): Checked<ChannelValues> {
  const name = checkName(body.name);
  if (!name.ok) return name;
  const config = createConfig(DRIVERS[body.type], body.config);
  if (!config.ok) return config;
  const filters = { ...defaultFilters(), ...body.filters };
  const zones = checkZones(filters.zones, knownZones);
  if (zones) return { ok: false, error: zones };
  const schedule = checkSchedule(body.digest ?? null, body.quiet_hours ?? null);
  if (!schedule.ok) return schedule;
  return {
    ok: true,
    value: { name: name.value, type: body.type, enabled: body.enabled ?? true, config: config.config, filters, ...schedule.value, updated_at: now },
  };
}

export function channelFromUpdate(
  current: StoredChannel,
  body: ChannelUpdate,
  knownZones: string[],
  now: string,
): Checked<{ values: ChannelValues; digestChanged: boolean }> {
  if (body.type !== undefined && body.type !== current.type) {
    return { ok: false, error: `type: a channel's type cannot change (it is ${current.type}); create a new channel instead` };
  }
  const name = body.name === undefined ? { ok: true as const, value: current.name } : checkName(body.name);
  if (!name.ok) return name;
  const config =
    body.config === undefined ? { ok: true as const, config: current.config } : updateConfig(DRIVERS[current.type], current.config, body.config);
  if (!config.ok) return config;
  const filters = { ...current.filters, ...body.filters };
  // Only zones the request names are checked: a zone removed from the configuration since does not block other edits.
  const zones = body.filters?.zones !== undefined ? checkZones(filters.zones, knownZones) : null;
  if (zones) return { ok: false, error: zones };
  const quiet =
    body.quiet_hours === undefined ? current.quiet_hours : body.quiet_hours === null ? null : { ...current.quiet_hours, ...body.quiet_hours };
  const digest = body.digest === undefined ? current.digest : body.digest;
  const schedule = checkSchedule(digest, quiet);
  if (!schedule.ok) return schedule;
  const values: ChannelValues = {
    name: name.value,
    type: current.type,
    enabled: body.enabled ?? current.enabled,
    config: config.config,
    filters,
    ...schedule.value,
    updated_at: now,
  };
  const tz = (q: QuietHours | null) => q?.timezone ?? 'UTC';
  const digestChanged = values.digest !== current.digest || (values.digest !== null && tz(values.quiet_hours) !== tz(current.quiet_hours));
  return { ok: true, value: { values, digestChanged } };
}
