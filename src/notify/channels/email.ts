/**
 * The `email` channel (CONTRACT §13): one message per delivery over SMTP with nodemailer, to every
 * address in `to`, with a plain-text and an HTML body (email-message.ts).
 *
 * Transport security:
 * - `secure: true` speaks TLS from the first byte (port 465, "SMTPS").
 * - otherwise STARTTLS is used whenever the server offers it; `require_tls: true` fails the
 *   delivery when it does not (instead of sending in the clear).
 * - Certificates are verified against the system's CAs. A server with a private CA or a
 *   self-signed certificate is trusted by giving that certificate (PEM) in `tls_ca`; as a last
 *   resort `tls_reject_unauthorized: false` turns verification off (the connection is then
 *   encrypted but not authenticated: anyone in the path can read the password).
 *
 * The password is bound to where it was saved for: `host`, `port`, `username`, `tls_ca` and
 * `tls_reject_unauthorized` are destination keys, and turning `secure` or `require_tls` off counts
 * as a change too (the password could then travel in the clear), so either without giving the
 * password again clears it (docs/security.md, "Secrets and where they go").
 */
import { isIP } from 'node:net';
import { type Static, Type } from '@sinclair/typebox';
import { resolveDestination } from '../http.js';
import { loginFields, tlsTrustFields } from './config-fields.js';
import { type ChannelDriver, DeliveryError, secretKeysOf, type OutgoingMessage, type SendContext } from '../types.js';
import { parseEmailAddress } from './email-address.js';
import { messageId, oneLine, renderEmail } from './email-message.js';

/** How many recipients one channel may have: a team's list, not a mailing list. */
export const EMAIL_MAX_RECIPIENTS = 50;

/**
 * The config. Keys with a default are optional, so the schema validates a config whether or not
 * the defaults were filled in first; the driver reads them with the same defaults.
 */
export const EmailConfig = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 253, title: 'SMTP server', description: 'SMTP server: a host name or an IP address.' }),
    port: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 65535,
        default: 587,
        title: 'Port',
        description: '587 (submission, STARTTLS) by default; 465 with `secure`.',
      }),
    ),
    secure: Type.Optional(
      Type.Boolean({
        default: false,
        title: 'Implicit TLS (port 465)',
        description: 'Implicit TLS from the first byte (port 465). Off: STARTTLS when the server offers it.',
      }),
    ),
    require_tls: Type.Optional(
      Type.Boolean({
        default: false,
        title: 'Refuse to send without TLS',
        description: 'Fail instead of sending unencrypted when the server does not offer STARTTLS.',
      }),
    ),
    ...loginFields('SMTP AUTH', 320, 'omit for a relay without authentication'),
    from: Type.String({
      minLength: 1,
      maxLength: 320,
      title: 'From',
      description: 'Sender: `alerts@example.com` or `Netwarden <alerts@example.com>`.',
    }),
    to: Type.Array(Type.String({ minLength: 1, maxLength: 320 }), {
      minItems: 1,
      maxItems: EMAIL_MAX_RECIPIENTS,
      title: 'To',
      description: 'Recipients, each `user@example.com` or `Name <user@example.com>`.',
    }),
    ...tlsTrustFields({
      caDescription: 'PEM certificate(s) to trust for this server besides the system CAs: a private CA or a self-signed certificate.',
      verifyTitle: 'Verify the server certificate',
      verifyDescription: 'Verify the server certificate (and its name). Turn off only as a last resort: prefer `tls_ca`.',
    }),
  },
  {
    additionalProperties: false,
    title: 'EmailChannelConfig',
    description:
      'type `email`: a message sent over SMTP; `password` is a secret bound to the destination (`host`, `port`, `username`, the TLS settings), and turning TLS off (`secure`, `require_tls` from true to false) without giving it again clears it too',
  },
);
export type EmailConfig = Static<typeof EmailConfig>;

/** Labels of a host name: letters (any script), digits and hyphens. */
const HOST_NAME = /^(?!-)[\p{L}\p{N}_-]{1,63}(?<!-)(?:\.(?!-)[\p{L}\p{N}_-]{1,63}(?<!-))*\.?$/u;

export function checkEmailConfig(config: EmailConfig): string | null {
  const host = typeof config.host === 'string' ? config.host : '';
  if (host.includes('://')) return 'config.host: give the server name alone (smtp.example.com), not a URL; set port and secure separately';
  if (!HOST_NAME.test(host) && isIP(host) === 0) return 'config.host: must be a host name such as smtp.example.com or an IP address';
  const port = config.port ?? 587;
  if (!Number.isInteger(port) || port < 1 || port > 65535) return 'config.port: must be an integer from 1 to 65535';
  const from = parseEmailAddress(String(config.from ?? ''));
  if (!from.ok) return `config.from: ${from.error}`;
  if (!Array.isArray(config.to) || config.to.length === 0) return 'config.to: give at least one recipient address';
  if (config.to.length > EMAIL_MAX_RECIPIENTS) return `config.to: at most ${EMAIL_MAX_RECIPIENTS} recipients`;
  for (const [i, recipient] of config.to.entries()) {
    const parsed = parseEmailAddress(String(recipient));
    if (!parsed.ok) return `config.to.${i}: ${parsed.error}`;
  }
  if (hasText(config.password) && !hasText(config.username)) return 'config.username: give the user name the password belongs to';
  if (hasText(config.tls_ca) && !/-----BEGIN CERTIFICATE-----/.test(config.tls_ca)) {
    return 'config.tls_ca: must be one or more PEM certificates (-----BEGIN CERTIFICATE-----)';
  }
  return null;
}

export const emailDriver: ChannelDriver<EmailConfig> = {
  type: 'email',
  configSchema: EmailConfig,
  secretKeys: secretKeysOf(EmailConfig),
  destinationKeys: ['host', 'port', 'username', 'tls_ca', 'tls_reject_unauthorized'],
  tlsKeys: ['secure', 'require_tls'],
  check: checkEmailConfig,
  send: sendEmail,
};

async function sendEmail(config: EmailConfig, message: OutgoingMessage, context: SendContext): Promise<void> {
  if (hasText(config.username) && !hasText(config.password)) {
    // The password was cleared when the destination changed (or never given): sending without
    // AUTH would only get a 530 from a server that wants it.
    throw new DeliveryError('config.password: not set (it is cleared when host, port or username change); enter it again', false);
  }
  const rendered = renderEmail(message, context.version);
  const from = parseEmailAddress(config.from);
  const timeout = Math.max(1, context.timeoutMs);
  // Loaded on first use: most installations never send email, and the service starts faster without it.
  // The server's address is checked here and connected to as checked (the name stays the TLS name).
  const address = await resolveDestination(config.host, context);
  const { createTransport } = await import('nodemailer');
  const transport = createTransport({
    host: address,
    ...(isIP(config.host) === 0 ? { servername: config.host } : {}),
    port: config.port ?? 587,
    secure: config.secure ?? false,
    requireTLS: config.require_tls ?? false,
    auth: hasText(config.username) ? { user: config.username, pass: config.password ?? '' } : undefined,
    tls: {
      ca: hasText(config.tls_ca) ? config.tls_ca : undefined,
      rejectUnauthorized: config.tls_reject_unauthorized ?? true,
      minVersion: 'TLSv1.2',
    },
    // Every wait ends within one attempt's budget; the signal below ends the attempt as a whole.
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
    dnsTimeout: timeout,
    socketCloseTimeout: 0,
    logger: false,
    debug: false,
  });
  try {
    await transport.sendMail({
      from: config.from,
      to: config.to,
      subject: rendered.subject,
      text: rendered.text,
      html: rendered.html,
      headers: rendered.headers,
      messageId: messageId(message, from.ok ? from.address : ''),
      date: new Date(Number.isFinite(Date.parse(message.sentAt)) ? message.sentAt : Date.now()),
      signal: context.signal,
    });
  } catch (error) {
    throw smtpDeliveryError(error, timeout);
  } finally {
    transport.close();
  }
}

/** What nodemailer attaches to its errors (nodemailer's NodemailerError, the fields we read). */
interface SmtpFailure {
  name?: string;
  message?: string;
  code?: string;
  originalCode?: string;
  responseCode?: number;
  response?: string;
  permanent?: boolean;
}

/** Node's codes for a certificate that does not verify: a setting to fix, not a moment to wait out. */
const CERTIFICATE_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * A nodemailer failure as a DeliveryError. An SMTP reply decides by its class (RFC 5321): 4xx
 * (451 local error, 421 service not available, 454 temporary authentication failure) may pass
 * later and is retried, 5xx (550 mailbox unavailable, 535 authentication failed) is not. Without
 * a reply: no connection, a reset or a timeout is retried; a certificate that does not verify,
 * STARTTLS missing while required, or credentials refused are settings to fix and are not.
 */
export function smtpDeliveryError(error: unknown, timeoutMs: number): DeliveryError {
  const failure = (typeof error === 'object' && error !== null ? error : { message: String(error) }) as SmtpFailure;
  const text = oneLine(String(failure.message ?? 'unknown error')).slice(0, 300);
  if (failure.code === 'EABORT' || failure.name === 'AbortError') {
    return new DeliveryError(`SMTP: no answer within ${timeoutMs} ms`, true);
  }
  if (typeof failure.responseCode === 'number' && failure.responseCode >= 400) {
    const code = failure.responseCode;
    const reply = oneLine(String(failure.response ?? text)).slice(0, 300);
    const permanent = failure.permanent ?? (code >= 500 && code !== 503);
    const what = failure.code === 'EAUTH' ? 'SMTP authentication failed' : 'SMTP server answered';
    return new DeliveryError(`${what}: ${reply}`, !permanent);
  }
  const underlying = failure.originalCode ?? failure.code ?? '';
  if (CERTIFICATE_CODES.has(underlying) || /certificate|self[- ]signed/i.test(text)) {
    return new DeliveryError(`SMTP: the server certificate was not accepted (${text}); trust it with config.tls_ca`, false);
  }
  switch (failure.code) {
    case 'EAUTH':
    case 'ENOAUTH':
      return new DeliveryError(`SMTP authentication failed: ${text}`, false);
    case 'ETLS':
      // STARTTLS not offered while require_tls is set, or the upgrade failed.
      return new DeliveryError(`SMTP TLS: ${text}`, false);
    case 'EENVELOPE':
    case 'EMESSAGE':
    case 'ECONFIG':
    case 'EMAXRECIPIENTS':
      return new DeliveryError(`SMTP: ${text}`, false);
    case 'ETIMEDOUT':
      return new DeliveryError(`SMTP: timed out (${text})`, true);
    default:
      // ECONNECTION, ESOCKET (connection refused or reset), EDNS, EPROTOCOL and anything unknown:
      // the next attempt may well succeed, and retries are bounded.
      return new DeliveryError(`SMTP: ${text}`, true);
  }
}

function hasText(value: string | null | undefined): value is string {
  return typeof value === 'string' && value.length > 0;
}
