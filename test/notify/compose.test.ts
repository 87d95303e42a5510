/**
 * Pure parts of notifications: message composition and truncation within each destination's
 * limits, the filters, quiet hours, digest slots and the retry schedule's contract guarantees.
 */
import { describe, expect, it } from 'vitest';
import { changeMatches, checkQuietHours, defaultFilters, dueSlot, parseCron, quietUntil } from '../../src/core/notify-rules.js';
import type { RiskLevel } from '../../src/core/severity.js';
import type { Change } from '../../src/schemas/change.js';
import type { DeviceSummary } from '../../src/schemas/device.js';
import type { DeviceFactsRow } from '../../src/store/notifications.js';
import { DISCORD_LIMITS, discordPayload } from '../../src/notify/channels/discord.js';
import { SLACK_LIMITS, slackPayload } from '../../src/notify/channels/slack.js';
import { splitTopic } from '../../src/notify/channels/ntfy.js';
import { composeMessage, renderText } from '../../src/notify/compose.js';
import { DEFAULT_RETRY_POLICY, nextAttemptAt } from '../../src/notify/delivery.js';
import { retryAfterMs } from '../../src/notify/http.js';
import type { OutgoingMessage } from '../../src/notify/types.js';

let nextId = 1;
function change(deviceId: number, severity: Change['severity'] = 'low', type: Change['change_type'] = 'port_opened'): Change {
  const id = nextId++;
  return {
    id,
    scan_id: 7,
    change_type: type,
    severity,
    device_id: deviceId,
    device_ip: `10.0.${Math.floor(deviceId / 250)}.${deviceId % 250}`,
    device_mac: null,
    port: 1000 + id,
    protocol: 'tcp',
    old_value: null,
    new_value: 'http',
    description: `Port ${1000 + id}/tcp (http) opened on 10.0.0.${deviceId % 250}`,
    detected_at: '2026-11-25T10:00:00.000Z',
  };
}

function devices(n: number): Map<number, DeviceFactsRow> {
  return new Map(
    Array.from({ length: n }, (_, i) => [
      i + 1,
      {
        id: i + 1,
        ip_address: `10.0.${Math.floor((i + 1) / 250)}.${(i + 1) % 250}`,
        label: i % 2 ? `Device ${i + 1}` : null,
        hostname: null,
        zone: null,
        is_trusted: false,
      },
    ]),
  );
}

const SCAN = {
  scan_id: 7,
  status: 'completed' as const,
  profile: 'normal',
  subnet: '10.0.0.0/16',
  scan_type: 'network' as const,
  target: null,
  started_at: '2026-11-25T09:59:00.000Z',
  completed_at: '2026-11-25T10:00:00.000Z',
  duration_seconds: 60,
  devices_found: 300,
  error: null,
  triggered_by: 'admin',
  progress: null,
  runner: null,
  agent_id: null,
  warnings: [],
  ports_examined: '1-1000',
  hosts_examined: 300,
};

function bigMessage(changes = 1000, deviceCount = 200): OutgoingMessage {
  const list = Array.from({ length: changes }, (_, i) => change((i % deviceCount) + 1, i === 5 ? 'critical' : 'low'));
  const composed = composeMessage({
    event: 'scan.changes',
    scan: SCAN,
    changes: list,
    devices: devices(deviceCount),
    publicUrl: 'https://nw.example.lan/',
  });
  return { ...composed, deliveryId: 1, sentAt: '2026-11-25T10:00:01.000Z' };
}

describe('composition', () => {
  it('titles, summarises and groups changes by device, worst first, with links', () => {
    const message = composeMessage({
      event: 'scan.changes',
      scan: SCAN,
      changes: [change(1, 'low'), change(2, 'high'), change(1, 'medium', 'service_changed'), change(3, 'medium', 'device_added')],
      devices: devices(3),
      publicUrl: 'https://nw.example.lan/',
    });
    expect(message.title).toBe('Netwarden: 4 changes on 10.0.0.0/16');
    expect(message.summary).toBe('4 changes in scan #7 of 10.0.0.0/16: 1 new device, 2 ports opened, 1 service changed; worst severity high.');
    expect(message.severity).toBe('high');
    expect(message.groups.map((g) => [g.name, g.url, g.changes.map((c) => c.severity)])).toEqual([
      ['10.0.0.2 "Device 2"', 'https://nw.example.lan/devices/2', ['high']],
      ['10.0.0.1', 'https://nw.example.lan/devices/1', ['medium', 'low']],
      ['10.0.0.3', 'https://nw.example.lan/devices/3', ['medium']],
    ]);
    const noLinks = composeMessage({ event: 'scan.changes', scan: SCAN, changes: [change(1)], devices: devices(1), publicUrl: '' });
    expect(noLinks.groups[0].url).toBeNull();
  });

  it('titles a lower risk as good news, and a higher one with its level and severity', () => {
    // Only the fields a device message reads; the rest of a DeviceSummary does not matter here.
    const device = { id: 5, ip_address: '10.0.0.5', label: 'Printer', hostname: null, vendor: null, mac_address: null } as unknown as DeviceSummary;
    const risk = (before: [RiskLevel, number], after: [RiskLevel, number]) =>
      composeMessage({
        event: 'risk.changed',
        scan: null,
        changes: [],
        devices: new Map(),
        publicUrl: 'https://nw.example.lan',
        device: {
          device,
          last_seen: null,
          away_seconds: null,
          risk: { before: { level: before[0], score: before[1] }, after: { level: after[0], score: after[1] }, reason: 'scan' },
        },
      });
    // Telnet closed: the risk went down, not "a port gone".
    const down = risk(['critical', 100], ['low', 5]);
    expect([down.title, down.summary, down.severity]).toEqual([
      'Netwarden: good news, the risk of 10.0.0.5 "Printer" went down',
      'The risk of 10.0.0.5 "Printer" went down from critical (100) to low (5), after a scan.',
      'info',
    ]);
    expect(down.groups).toMatchObject([{ device_id: 5, url: 'https://nw.example.lan/devices/5', changes: [] }]);
    const up = risk(['low', 5], ['high', 60]);
    expect([up.title, up.summary, up.severity]).toEqual([
      'Netwarden: the risk of 10.0.0.5 "Printer" went up to high',
      'The risk of 10.0.0.5 "Printer" went up from low (5) to high (60), after a scan.',
      'high',
    ]);
    // Same level, lower score: still down.
    expect(risk(['high', 70], ['high', 55]).title).toContain('good news');
  });

  it('cuts long text at whole lines and counts what was left out', () => {
    const message = bigMessage();
    const text = renderText(message, { maxChars: 3500, links: true });
    expect(text.length).toBeLessThanOrEqual(3500);
    const shown = text.split('\n').filter((l) => l.startsWith('  • ')).length;
    expect(text.endsWith(`… and ${1000 - shown} more changes`)).toBe(true);
    expect(text.startsWith(message.summary)).toBe(true);
    // The critical change comes first.
    expect(text.split('\n')[3]).toContain('[critical]');
    const whole = renderText(
      composeMessage({ event: 'scan.changes', scan: SCAN, changes: [change(1), change(2)], devices: devices(2), publicUrl: '' }),
      {
        maxChars: 3500,
      },
    );
    expect(whole).not.toContain('more change');
  });

  it('keeps Discord within its limits', () => {
    const payload = discordPayload(bigMessage());
    expect(payload.content.length).toBeLessThanOrEqual(DISCORD_LIMITS.content);
    expect(payload.embeds.length).toBeLessThanOrEqual(DISCORD_LIMITS.embeds);
    const total = payload.embeds.reduce((n, e) => n + e.title.length + e.description.length, 0);
    expect(total).toBeLessThanOrEqual(DISCORD_LIMITS.total);
    for (const e of payload.embeds) expect(e.description.length).toBeLessThanOrEqual(DISCORD_LIMITS.description);
    expect(payload.content).toMatch(/… and \d+ more changes on \d+ more devices$/);
    expect(payload.allowed_mentions).toEqual({ parse: [] });
  });

  it('keeps Slack within its limits', () => {
    const payload = slackPayload(bigMessage());
    expect(payload.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocks);
    for (const b of payload.blocks) {
      const text = (b.text as { text: string } | undefined)?.text ?? '';
      expect(text.length).toBeLessThanOrEqual(b.type === 'header' ? SLACK_LIMITS.header : SLACK_LIMITS.section);
    }
    expect(JSON.stringify(payload.blocks.at(-1))).toMatch(/… and \d+ more changes on \d+ more devices/);
    expect(payload.text.length).toBeLessThanOrEqual(SLACK_LIMITS.text);
  });

  it('finds the ntfy server and topic in the URL', () => {
    expect(splitTopic('https://ntfy.sh/alerts')).toEqual({ server: 'https://ntfy.sh/', topic: 'alerts' });
    expect(splitTopic('http://host:8080/ntfy/alerts?x=1')).toEqual({ server: 'http://host:8080/ntfy/', topic: 'alerts' });
    expect(splitTopic('https://ntfy.sh/')).toBeNull();
  });
});

describe('filters, quiet hours and digests', () => {
  it('selects changes by type, severity, zone and trust', () => {
    const f = defaultFilters();
    const trusted = { zone: 'IoT', is_trusted: true };
    expect(changeMatches(change(1, 'low'), f, undefined)).toBe(true);
    expect(changeMatches(change(1, 'info'), f, undefined)).toBe(false);
    expect(changeMatches(change(1, 'info'), { ...f, min_severity: 'info' }, undefined)).toBe(true);
    expect(changeMatches(change(1, 'high'), { ...f, change_types: ['device_added'] }, undefined)).toBe(false);
    expect(changeMatches(change(1), { ...f, zones: ['IoT'] }, trusted)).toBe(true);
    expect(changeMatches(change(1), { ...f, zones: ['Servers'] }, trusted)).toBe(false);
    expect(changeMatches(change(1), { ...f, zones: ['IoT'] }, undefined)).toBe(false);
    expect(changeMatches(change(1), { ...f, untrusted_only: true }, trusted)).toBe(false);
    expect(changeMatches(change(1), { ...f, untrusted_only: true }, { zone: null, is_trusted: false })).toBe(true);
  });

  it('knows when quiet hours end, across midnight and in a time zone', () => {
    const q = { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' };
    expect(quietUntil(q, new Date('2026-11-25T20:59:00Z'))).toBeNull();
    expect(quietUntil(q, new Date('2026-11-25T21:00:00Z'))?.toISOString()).toBe('2026-11-26T06:00:00.000Z');
    expect(quietUntil(q, new Date('2026-11-26T05:59:00Z'))?.toISOString()).toBe('2026-11-26T06:00:00.000Z');
    expect(quietUntil(q, new Date('2026-11-26T06:00:00Z'))).toBeNull();
    const day = { start: '09:00', end: '17:00', timezone: 'UTC' };
    expect(quietUntil(day, new Date('2026-11-25T12:00:00Z'))?.toISOString()).toBe('2026-11-25T17:00:00.000Z');
    expect(quietUntil(day, new Date('2026-11-25T18:00:00Z'))).toBeNull();
    expect(checkQuietHours({ start: '22:00', end: '22:00' })).toMatchObject({ ok: false, error: 'quiet_hours.end: must differ from start' });
    expect(checkQuietHours({ start: '22:00', end: '07:00' })).toEqual({ ok: true, value: { start: '22:00', end: '07:00', timezone: 'UTC' } });
  });

  it('parses five-field crons only and collapses missed slots into one', () => {
    expect(parseCron('0 8 * * mon-fri').ok).toBe(true);
    expect(parseCron('*/15 * * * *').ok).toBe(true);
    expect(parseCron('0 0 8 * * *')).toMatchObject({ ok: false });
    expect(parseCron('0 8 * *')).toMatchObject({ ok: false });
    expect(parseCron('0 8 30 2 *')).toMatchObject({ ok: false });
    const cron = parseCron('0 * * * *');
    if (!cron.ok) throw new Error(cron.error);
    expect(dueSlot(cron.value, new Date('2026-11-25T10:00:00Z'), new Date('2026-11-25T10:59:00Z'))).toBeNull();
    expect(dueSlot(cron.value, new Date('2026-11-25T10:00:00Z'), new Date('2026-11-25T14:30:00Z'))?.toISOString()).toBe('2026-11-25T14:00:00.000Z');
  });
});

describe('retry schedule', () => {
  it('keeps the contract with the production defaults: ≥ 3 attempts, growing delays, the last within 90 s even if every attempt times out', () => {
    const p = DEFAULT_RETRY_POLICY;
    expect(p.timeoutMs).toBe(10_000);
    const first = new Date(0);
    let at = first;
    const starts = [0];
    const delays: number[] = [];
    for (let attempts = 1; ; attempts++) {
      const failedAt = new Date(at.getTime() + p.timeoutMs);
      const next = nextAttemptAt(p, attempts, first, failedAt, null);
      if (!next) break;
      delays.push(next.getTime() - failedAt.getTime());
      at = next;
      starts.push(at.getTime());
    }
    expect(starts.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < delays.length; i++) expect(delays[i]).toBeGreaterThan(delays[i - 1]);
    expect(starts.at(-1)).toBeLessThanOrEqual(90_000);
  });

  it('honours Retry-After up to 60 s and never goes past the window', () => {
    const p = DEFAULT_RETRY_POLICY;
    const first = new Date(0);
    expect(nextAttemptAt(p, 1, first, new Date(100), 20_000)?.getTime()).toBe(20_100);
    expect(nextAttemptAt(p, 1, first, new Date(100), 3_600_000)?.getTime()).toBe(60_100);
    expect(nextAttemptAt(p, 2, first, new Date(80_000), 30_000)?.getTime()).toBe(90_000);
    expect(nextAttemptAt(p, 3, first, new Date(90_000), null)).toBeNull();
    expect(nextAttemptAt(p, 4, first, new Date(1000), null)).toBeNull();
    expect(retryAfterMs('7')).toBe(7000);
    expect(retryAfterMs(new Date(Date.now() + 5000).toUTCString(), Date.now())).toBeGreaterThan(3000);
    expect(retryAfterMs('soon')).toBeNull();
  });
});
