/**
 * What a message says, composed once per delivery and rendered by each driver in its own form:
 * a title, a one-line summary, and the changes in plain words grouped by device, each device
 * linked to its page when `server.public_url` is set. Pure.
 */
import type { ChangeType } from '../core/changes.js';
import type { MessageEvent } from '../core/notify-rules.js';
import { SEVERITY_RANK, worse, type Severity } from '../core/severity.js';
import type { Change } from '../schemas/change.js';
import type { ScanRecord } from '../schemas/scan.js';
import type { DeviceFactsRow } from '../store/notifications.js';
import type { DeviceGroup, DeviceMessage, OutgoingMessage, RiskChange } from './types.js';

/** A message before it is given a delivery id and a send time: what a delivery stores. */
export type ComposedMessage = Omit<OutgoingMessage, 'deliveryId' | 'sentAt'>;

export interface ComposeInput {
  event: MessageEvent;
  scan: ScanRecord | null;
  changes: Change[];
  devices: Map<number, DeviceFactsRow>;
  /** `server.public_url`; "" for no links. */
  publicUrl: string;
  channelName?: string;
  /** For a device event. */
  device?: DeviceMessage;
}

const KIND_WORDS: Record<ChangeType, [string, string]> = {
  device_added: ['new device', 'new devices'],
  device_removed: ['device gone', 'devices gone'],
  port_opened: ['port opened', 'ports opened'],
  port_closed: ['port closed', 'ports closed'],
  service_changed: ['service changed', 'services changed'],
};

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

export function composeMessage(input: ComposeInput): ComposedMessage {
  const { event, scan, changes } = input;
  const severity = changes.reduce<Severity>((s, c) => worse(s, c.severity), 'info');
  const groups = groupByDevice(changes, input.devices, input.publicUrl);
  const where = scan ? scan.subnet : 'the network';
  const counted = changes.length ? `${countKinds(changes)}; worst severity ${severity}` : '';
  let title: string;
  let summary: string;
  switch (event) {
    case 'scan.changes':
      title = `Netwarden: ${plural(changes.length, 'change', 'changes')} on ${where}`;
      summary = `${plural(changes.length, 'change', 'changes')} in scan #${scan?.scan_id ?? '?'} of ${where}: ${counted}.`;
      break;
    case 'scan.completed':
      title = `Netwarden: scan of ${where} completed`;
      summary =
        `Scan #${scan?.scan_id ?? '?'} of ${where} completed` +
        (scan?.duration_seconds != null ? ` in ${Math.round(scan.duration_seconds)} s` : '') +
        `: ${plural(scan?.devices_found ?? 0, 'device', 'devices')} found, no matching changes.`;
      break;
    case 'scan.failed':
      title = `Netwarden: scan of ${where} failed`;
      summary = `Scan #${scan?.scan_id ?? '?'} of ${where} failed: ${scan?.error ?? 'no reason recorded'}.`;
      break;
    case 'digest': {
      const scans = new Set(changes.map((c) => c.scan_id)).size;
      title = `Netwarden digest: ${plural(changes.length, 'change', 'changes')}`;
      summary = `${plural(changes.length, 'change', 'changes')} from ${plural(scans, 'scan', 'scans')}: ${counted}.`;
      break;
    }
    case 'test':
      title = 'Netwarden: test message';
      summary = `Test message for the channel "${input.channelName ?? ''}": if you read this, it works.`;
      break;
    case 'device.new':
    case 'device.offline':
    case 'device.online':
    case 'risk.changed':
      return composeDeviceMessage(event, input);
  }
  return { event, title, summary, groups, severity, scan, changes };
}

/** "3 h 20 min", "45 s": how long a device was away. */
export function durationWords(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
  return `${Math.floor(hours / 24)} days`;
}

/** Why a device's risk changed, in words (`risk_changed`'s `reason`). */
export const RISK_REASON_WORDS: Record<RiskChange['reason'], string> = {
  scan: 'after a scan',
  reassessed: 'after a re-assessment (zone policy, rules or CVE data)',
  accepted: 'a finding was accepted',
  acceptance_removed: 'an acceptance was removed',
  acceptance_expired: 'an acceptance expired',
};

/**
 * A risk change in words, good news first when it went down ("telnet closed" reads as the risk
 * going down, not as a port gone): the title, the summary, and the severity of the message (the
 * new level when it went up, info when it went down).
 */
function riskWords(name: string, risk: RiskChange): { title: string; summary: string; severity: Severity } {
  const rank = (s: RiskChange['before']) => SEVERITY_RANK[s.level];
  const down = rank(risk.after) < rank(risk.before) || (rank(risk.after) === rank(risk.before) && risk.after.score < risk.before.score);
  const from = `${risk.before.level} (${risk.before.score})`;
  const to = `${risk.after.level} (${risk.after.score})`;
  const why = RISK_REASON_WORDS[risk.reason];
  if (down)
    return {
      title: `Netwarden: good news, the risk of ${name} went down`,
      summary: `The risk of ${name} went down from ${from} to ${to}, ${why}.`,
      severity: 'info',
    };
  return {
    title: `Netwarden: the risk of ${name} went up to ${risk.after.level}`,
    summary: `The risk of ${name} went up from ${from} to ${to}, ${why}.`,
    severity: risk.after.level === 'none' ? 'info' : risk.after.level,
  };
}

/** A device event's message: one device, no changes; its name links to its page when `server.public_url` is set. */
function composeDeviceMessage(event: 'device.new' | 'device.offline' | 'device.online' | 'risk.changed', input: ComposeInput): ComposedMessage {
  const message = input.device!;
  const d = message.device;
  const name = d.label ? `${d.ip_address} "${d.label}"` : d.hostname ? `${d.ip_address} (${d.hostname})` : d.ip_address;
  const what = [d.vendor, d.mac_address].filter(Boolean).join(', ');
  const away = message.away_seconds === null ? '' : ` after ${durationWords(message.away_seconds)}`;
  const texts = {
    'device.new': [
      `Netwarden: new device ${name}`,
      `New device ${name}${what ? ` (${what})` : ''} joined the network; acknowledge it if it is yours.`,
    ],
    'device.offline': [`Netwarden: ${name} went offline`, `${name} went offline` + (message.last_seen ? `; last seen ${message.last_seen}.` : '.')],
    'device.online': [`Netwarden: ${name} is back online`, `${name} is back online${away ? `${away} away` : ''}.`],
  } as const;
  const base = input.publicUrl.replace(/\/+$/, '');
  const group: DeviceGroup = { device_id: d.id, name, url: base ? `${base}/devices/${d.id}` : null, changes: [] };
  if (event === 'risk.changed') {
    const words = riskWords(name, message.risk!);
    return { event, title: words.title, summary: words.summary, groups: [group], severity: words.severity, scan: null, changes: [], device: message };
  }
  return { event, title: texts[event][0], summary: texts[event][1], groups: [group], severity: 'info', scan: null, changes: [], device: message };
}

/** "2 new devices, 1 port opened" in the order of CHANGE_TYPES. */
function countKinds(changes: Change[]): string {
  const counts = new Map<ChangeType, number>();
  for (const c of changes) counts.set(c.change_type, (counts.get(c.change_type) ?? 0) + 1);
  return (Object.keys(KIND_WORDS) as ChangeType[])
    .filter((k) => counts.has(k))
    .map((k) => plural(counts.get(k)!, ...KIND_WORDS[k]))
    .join(', ');
}

/** The device's name as a message shows it: `10.0.0.5 "NAS"`, `10.0.0.5 (nas.lan)` or the address. */
export function deviceName(device: DeviceFactsRow | undefined, change: Change): string {
  const ip = device?.ip_address ?? change.device_ip ?? 'unknown device';
  if (device?.label) return `${ip} "${device.label}"`;
  if (device?.hostname) return `${ip} (${device.hostname})`;
  return ip;
}

/** Changes grouped by device, the worst device first, each group's changes worst first. */
export function groupByDevice(changes: Change[], devices: Map<number, DeviceFactsRow>, publicUrl: string): DeviceGroup[] {
  const base = publicUrl.replace(/\/+$/, '');
  const groups = new Map<string, DeviceGroup & { worst: Severity }>();
  for (const change of changes) {
    const key = change.device_id !== null ? `id:${change.device_id}` : `ip:${change.device_ip ?? ''}`;
    let group = groups.get(key);
    if (!group) {
      const device = change.device_id !== null ? devices.get(change.device_id) : undefined;
      group = {
        device_id: change.device_id ?? 0,
        name: deviceName(device, change),
        url: base && change.device_id !== null ? `${base}/devices/${change.device_id}` : null,
        changes: [],
        worst: 'info',
      };
      groups.set(key, group);
    }
    group.changes.push(change);
    group.worst = worse(group.worst, change.severity);
  }
  return [...groups.values()]
    .sort((a, b) => SEVERITY_RANK[b.worst] - SEVERITY_RANK[a.worst] || a.name.localeCompare(b.name, 'en', { numeric: true }))
    .map(({ worst: _worst, ...group }) => ({
      ...group,
      changes: [...group.changes].sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || a.id - b.id),
    }));
}

/** One change in plain words: `[high] Port 23/tcp (telnet) opened on 10.0.0.5`. */
export function changeLine(change: Change): string {
  return `[${change.severity}] ${change.description}`;
}

export interface RenderOptions {
  /** Most characters of the whole text (the destination's limit). */
  maxChars: number;
  /** Whether to append each device's link after its name. */
  links?: boolean;
  /** Leave the summary out (the destination shows it elsewhere). */
  withoutSummary?: boolean;
}

/**
 * The message as plain text within `maxChars`: the summary, then per device its name (and link)
 * and its changes. What does not fit is cut at a whole line and counted: "… and 940 more changes".
 */
export function renderText(message: Pick<ComposedMessage, 'summary' | 'groups' | 'changes'>, options: RenderOptions): string {
  const head = options.withoutSummary ? [] : [message.summary];
  const lines: Array<{ text: string; change: boolean }> = [];
  for (const group of message.groups) {
    lines.push({
      text: `${lines.length || head.length ? '\n' : ''}${group.name}${options.links && group.url ? ` — ${group.url}` : ''}`,
      change: false,
    });
    for (const c of group.changes) lines.push({ text: `  • ${changeLine(c)}`, change: true });
  }
  return fitLines(head, lines, options.maxChars);
}

/** Joins lines within `max` characters, replacing what does not fit by a count of the changes left out. */
export function fitLines(head: string[], lines: Array<{ text: string; change: boolean }>, max: number): string {
  const total = lines.filter((l) => l.change).length;
  const out = [...head];
  let length = head.join('\n').length;
  let shown = 0;
  for (const [i, line] of lines.entries()) {
    const left = total - shown - (line.change ? 1 : 0);
    // Room for this line and, if anything would be left after it, the trailer.
    const trailer = left > 0 ? `\n… and ${left} more ${left === 1 ? 'change' : 'changes'}`.length : 0;
    if (length + 1 + line.text.length + trailer > max) break;
    // A device header is worth showing only with at least one of its changes after it.
    if (!line.change && lines[i + 1]?.change) {
      const next = lines[i + 1].text.length + 1;
      const leftAfter = total - shown - 1;
      const trailerAfter = leftAfter > 0 ? `\n… and ${leftAfter} more changes`.length : 0;
      if (length + 1 + line.text.length + next + trailerAfter > max) break;
    }
    out.push(line.text);
    length += 1 + line.text.length;
    if (line.change) shown++;
  }
  const left = total - shown;
  if (left > 0) out.push(`… and ${left} more ${left === 1 ? 'change' : 'changes'}`);
  return truncate(out.join('\n'), max);
}

/** Cuts text to `max` characters with an ellipsis (for titles and single fields). */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** A message as a delivery stores it: each change once (the groups name their changes by id). */
interface PackedMessage extends Omit<ComposedMessage, 'groups'> {
  groups: Array<Omit<DeviceGroup, 'changes'> & { change_ids: number[] }>;
}

/** Serialises a message for the delivery log without repeating every change inside its group. */
export function packMessage(message: ComposedMessage): string {
  const packed: PackedMessage = { ...message, groups: message.groups.map(({ changes, ...g }) => ({ ...g, change_ids: changes.map((c) => c.id) })) };
  return JSON.stringify(packed);
}

export function unpackMessage(text: string): ComposedMessage {
  const packed = JSON.parse(text) as PackedMessage;
  const byId = new Map(packed.changes.map((c) => [c.id, c]));
  return {
    ...packed,
    groups: packed.groups.map(({ change_ids, ...g }) => ({ ...g, changes: change_ids.flatMap((id) => byId.get(id) ?? []) })),
  };
}
