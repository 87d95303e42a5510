/**
 * One TLS port's certificate: a handshake (not verified: we read what the host presents, no SNI
 * since we address it by IP), then the leaf certificate's subject, issuer, subject alternative
 * names, validity, whether it signed itself, and the sha256 of its public key (SPKI DER, hex): the
 * key survives a re-issued certificate, so it is an identity key. The connection is closed right
 * after the handshake; nothing is sent inside it.
 */
import { createHash, X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import type { TlsResult } from '../core/probe-results.js';
import { deadlineSignal, isUnicastHost, quietly, settleOnce, type ProbeOptions } from './common.js';
import { cleanText } from './text.js';

const MAX_SANS = 64;

/** `CN=nas.local, O=Synology`: Node's one-attribute-per-line form, on one line. */
function distinguishedName(text: string): string | null {
  return cleanText(text.split('\n').filter(Boolean).join(', '), 512);
}

/** DNS names and IP addresses of Node's `subjectAltName` text (`DNS:a, IP Address:10.0.0.1`). */
export function parseSans(text: string | undefined): string[] {
  if (!text) return [];
  const out: string[] = [];
  for (const entry of text.split(/, (?=[A-Za-z][A-Za-z ]*:)/)) {
    const m = /^(DNS|IP Address):(.*)$/.exec(entry.trim());
    if (!m) continue;
    const value = cleanText(m[2].replace(/^"(.*)"$/, '$1'), 255);
    if (value && !out.includes(value)) out.push(value);
    if (out.length >= MAX_SANS) break;
  }
  return out;
}

function isoDate(text: string): string | null {
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** The fields of a certificate, as the probe reports them. */
export function describeCertificate(cert: X509Certificate, port: number): TlsResult {
  let selfSigned = false;
  try {
    selfSigned = cert.checkIssued(cert) && cert.verify(cert.publicKey);
  } catch {
    selfSigned = false;
  }
  let keyHash: string | null = null;
  try {
    keyHash = createHash('sha256')
      .update(cert.publicKey.export({ type: 'spki', format: 'der' }))
      .digest('hex');
  } catch {
    keyHash = null;
  }
  return {
    port,
    subject: distinguishedName(cert.subject),
    issuer: distinguishedName(cert.issuer),
    sans: parseSans(cert.subjectAltName),
    notBefore: isoDate(cert.validFrom),
    notAfter: isoDate(cert.validTo),
    selfSigned,
    keyHash,
  };
}

export async function probeTls(host: string, port: number, options: ProbeOptions = {}): Promise<TlsResult | null> {
  if (!isUnicastHost(host) || !Number.isInteger(port) || port < 1 || port > 65535) return null;
  return quietly(() => run(host, port, options));
}

function run(host: string, port: number, options: ProbeOptions): Promise<TlsResult | null> {
  const signal = deadlineSignal(options);
  if (signal.aborted) return Promise.resolve(null);
  return new Promise((resolve) => {
    const finish = settleOnce<TlsResult>(signal, resolve, () => socket.destroy());
    // Any protocol version the host offers, old ones included: we want its certificate, not a secure channel.
    // Old devices (printers, cameras) offer TLS 1.0 and weak keys that today's default security level refuses.
    const socket = tls.connect({
      host,
      port,
      rejectUnauthorized: false,
      minVersion: 'TLSv1',
      ciphers: 'DEFAULT:@SECLEVEL=0',
      ALPNProtocols: ['http/1.1'],
    });
    socket.once('secureConnect', () => {
      let cert: X509Certificate | undefined;
      try {
        cert = socket.getPeerX509Certificate();
      } catch {
        cert = undefined;
      }
      finish(cert ? describeCertificate(cert, port) : null);
    });
    socket.on('error', () => finish(null));
    socket.on('close', () => finish(null));
  });
}
