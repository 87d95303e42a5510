/**
 * The TLS probe against real TLS servers on loopback: a self-signed certificate and one signed by
 * a throw-away CA (openssl CLI) give their subject, issuer, SANs, validity, self-signedness and
 * the sha256 of their public key; a plain-text or silent port, or a cancel, gives null promptly.
 */
import { createHash, createPublicKey } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseSans, probeTls } from '../../src/probes/tls.js';
import { greetingServer, makeSelfSignedCert, silentServer, type Listener, type SelfSignedCert } from '../scan/native/listeners.js';
import { caSignedCertificate, webServer, type Certificate, type WebServer } from './servers.js';

const HOST = '127.0.0.1';

let selfSigned: SelfSignedCert;
let signed: Certificate;
beforeAll(async () => {
  const made = await makeSelfSignedCert('nas.local', 'DNS:nas.local,DNS:diskstation,IP:127.0.0.1');
  if (!made) throw new Error('openssl could not make a test certificate (apt-get install openssl)');
  selfSigned = made;
  signed = await caSignedCertificate('/CN=printer.lan/O=Acme Printers', 'DNS:printer.lan,IP:127.0.0.1');
});

const open: (WebServer | Listener)[] = [];
async function track<T extends WebServer | Listener>(p: Promise<T>): Promise<T> {
  const value = await p;
  open.push(value);
  return value;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** sha256 of the SPKI DER, from the private key: the same public key the certificate carries. */
function keyHashOf(privateKeyPem: string): string {
  return createHash('sha256')
    .update(createPublicKey(privateKeyPem).export({ type: 'spki', format: 'der' }))
    .digest('hex');
}

describe('TLS probe', () => {
  it('reads a self-signed certificate: subject, SANs, validity and key hash', async () => {
    const server = await track(webServer(HOST, {}, selfSigned));
    const result = await probeTls(HOST, server.port, { timeoutMs: 3000 });
    expect(result).toMatchObject({
      port: server.port,
      subject: 'CN=nas.local',
      issuer: 'CN=nas.local',
      sans: ['nas.local', 'diskstation', '127.0.0.1'],
      selfSigned: true,
      keyHash: keyHashOf(selfSigned.key),
    });
    const notBefore = Date.parse(result!.notBefore!);
    const notAfter = Date.parse(result!.notAfter!);
    expect(Math.abs(notBefore - Date.now())).toBeLessThan(10 * 60_000);
    expect(Math.round((notAfter - notBefore) / 86_400_000)).toBe(2);
  });

  it('tells a CA-signed certificate from a self-signed one', async () => {
    const server = await track(webServer(HOST, {}, signed));
    const result = await probeTls(HOST, server.port, { timeoutMs: 3000 });
    expect(result).toMatchObject({
      subject: 'CN=printer.lan, O=Acme Printers',
      issuer: 'CN=Netwarden Test CA',
      sans: ['printer.lan', '127.0.0.1'],
      selfSigned: false,
      keyHash: keyHashOf(signed.key),
    });
  });

  it('reads the certificate of an old device that speaks TLS 1.0 only', async () => {
    const old = https.createServer({
      key: selfSigned.key,
      cert: selfSigned.cert,
      minVersion: 'TLSv1',
      maxVersion: 'TLSv1',
      ciphers: 'DEFAULT:@SECLEVEL=0',
    });
    old.on('tlsClientError', () => {});
    await new Promise<void>((resolve) => old.listen(0, HOST, resolve));
    try {
      const { port } = old.address() as AddressInfo;
      expect(await probeTls(HOST, port, { timeoutMs: 2000 })).toMatchObject({ subject: 'CN=nas.local', keyHash: keyHashOf(selfSigned.key) });
    } finally {
      await new Promise<void>((resolve) => old.close(() => resolve()));
    }
  });

  it('returns null for plain text, silence or cancel, promptly', async () => {
    const plain = await track(greetingServer(HOST, 'SSH-2.0-OpenSSH_9.2\r\n'));
    expect(await probeTls(HOST, plain.port, { timeoutMs: 1000 })).toBeNull();

    const silent = await track(silentServer(HOST));
    const started = Date.now();
    expect(await probeTls(HOST, silent.port, { timeoutMs: 300 })).toBeNull();
    expect(Date.now() - started).toBeLessThan(2000);

    const controller = new AbortController();
    const cancelStart = Date.now();
    const pending = probeTls(HOST, silent.port, { timeoutMs: 20_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    expect(await pending).toBeNull();
    expect(Date.now() - cancelStart).toBeLessThan(2000);
  });

  it('reads DNS and IP names from the subjectAltName text and nothing else', () => {
    expect(parseSans('DNS:a.example, IP Address:10.0.0.1, email:x@y.z, URI:http://u, DNS:a.example')).toEqual(['a.example', '10.0.0.1']);
    expect(parseSans(undefined)).toEqual([]);
    expect(parseSans(Array.from({ length: 200 }, (_, i) => `DNS:h${i}.lan`).join(', '))).toHaveLength(64);
  });
});
