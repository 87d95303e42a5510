/**
 * What an email notification says: the subject, a plain-text body and an HTML body listing the
 * changes grouped by device, and the headers mail filters sort on. Pure: no I/O, so the rendering
 * is tested without a mail server. Everything taken from the message (device labels, hostnames,
 * banners in change descriptions) is untrusted text and is escaped in the HTML body.
 */
import type { DeviceGroup, OutgoingMessage } from '../types.js';

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
  headers: Record<string, string>;
}

/** Colours of the severity labels in the HTML body (worst first, as core/severity.ts orders them). */
const SEVERITY_COLOURS: Record<string, string> = {
  critical: '#b71c1c',
  high: '#e65100',
  medium: '#f9a825',
  low: '#1565c0',
  info: '#616161',
};

export function renderEmail(message: OutgoingMessage, version: string): RenderedEmail {
  return {
    subject: oneLine(message.title),
    text: renderText(message, version),
    html: renderHtml(message, version),
    headers: emailHeaders(message, version),
  };
}

/**
 * Headers a mail rule can sort on without reading the body, and the two that keep auto-responders
 * (out-of-office replies) from answering a machine: RFC 3834's `Auto-Submitted` and Exchange's
 * `X-Auto-Response-Suppress`.
 */
export function emailHeaders(message: OutgoingMessage, version: string): Record<string, string> {
  const headers: Record<string, string> = {
    'X-Netwarden-Event': message.event,
    'X-Netwarden-Delivery': String(message.deliveryId),
    'X-Netwarden-Severity': message.severity,
    'X-Mailer': `Netwarden/${oneLine(version)}`,
    'Auto-Submitted': 'auto-generated',
    'X-Auto-Response-Suppress': 'All',
  };
  if (message.scan) {
    headers['X-Netwarden-Scan'] = String(message.scan.scan_id);
    headers['X-Netwarden-Subnet'] = oneLine(message.scan.subnet);
  }
  return headers;
}

/**
 * A Message-ID that stays the same for every attempt of one delivery, so a mail client that got
 * an attempt the server accepted but whose answer was lost shows the retry as the same message.
 */
export function messageId(message: OutgoingMessage, fromAddress: string): string {
  const at = fromAddress.lastIndexOf('@');
  const domain = at >= 0 ? fromAddress.slice(at + 1).replace(/[^A-Za-z0-9.-]/g, '') || 'netwarden.invalid' : 'netwarden.invalid';
  const stamp = Date.parse(message.sentAt);
  return `<netwarden.delivery.${message.deliveryId}.${Number.isFinite(stamp) ? stamp : 0}@${domain}>`;
}

function renderText(message: OutgoingMessage, version: string): string {
  const lines: string[] = [oneLine(message.summary), ''];
  for (const group of message.groups) {
    lines.push(group.url ? `${oneLine(group.name)}  <${oneLine(group.url)}>` : oneLine(group.name));
    for (const change of group.changes) lines.push(`  - [${change.severity}] ${oneLine(change.description)}`);
    lines.push('');
  }
  const scan = scanLine(message);
  if (scan) lines.push(scan, '');
  lines.push('-- ', `Sent by Netwarden ${oneLine(version)} (delivery ${message.deliveryId}, event ${message.event}).`);
  return lines.join('\n') + '\n';
}

function renderHtml(message: OutgoingMessage, version: string): string {
  const parts: string[] = [
    '<!DOCTYPE html>',
    '<html><head><meta charset="utf-8">',
    `<title>${escapeHtml(oneLine(message.title))}</title></head>`,
    '<body style="font-family: -apple-system, Segoe UI, Helvetica, Arial, sans-serif; font-size: 14px; color: #212121;">',
    `<p>${escapeHtml(oneLine(message.summary))}</p>`,
  ];
  for (const group of message.groups) parts.push(renderGroup(group));
  const scan = scanLine(message);
  if (scan) parts.push(`<p style="color: #616161;">${escapeHtml(scan)}</p>`);
  parts.push(
    `<p style="color: #9e9e9e; font-size: 12px;">Sent by Netwarden ${escapeHtml(oneLine(version))} ` +
      `(delivery ${message.deliveryId}, event ${escapeHtml(message.event)}).</p>`,
    '</body></html>',
  );
  return parts.join('\n') + '\n';
}

function renderGroup(group: DeviceGroup): string {
  const name = escapeHtml(oneLine(group.name));
  const link = group.url && isWebUrl(group.url) ? `<a href="${escapeHtml(group.url)}">${name}</a>` : name;
  const items = group.changes.map((change) => {
    const colour = SEVERITY_COLOURS[change.severity] ?? SEVERITY_COLOURS.info;
    return (
      `<li><span style="color: ${colour}; font-weight: bold;">${escapeHtml(change.severity)}</span> ` +
      `${escapeHtml(oneLine(change.description))}</li>`
    );
  });
  return `<h3 style="margin: 16px 0 4px;">${link}</h3>\n<ul style="margin: 0;">\n${items.join('\n')}\n</ul>`;
}

function scanLine(message: OutgoingMessage): string | null {
  const scan = message.scan;
  if (!scan) return null;
  const parts = [`Scan #${scan.scan_id} of ${oneLine(scan.subnet)}: ${scan.status}`];
  if (scan.completed_at) parts.push(`finished ${scan.completed_at}`);
  if (scan.status === 'completed') parts.push(`${scan.devices_found} device${scan.devices_found === 1 ? '' : 's'} found`);
  if (scan.error) parts.push(`error: ${oneLine(scan.error)}`);
  return parts.join(', ') + '.';
}

/** Only http(s) links become anchors: a `javascript:` URL must never be clickable. */
function isWebUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}

/** Text for one line: control characters (CR and LF included) become spaces. */
export function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}
