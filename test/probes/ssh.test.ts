/**
 * The SSH probe. No sshd runs here, so the host-key path is checked in two real ways: against a
 * key made by ssh-keygen, whose fingerprint `ssh-keygen -l` prints (ours must be identical), and
 * with a stand-in ssh-keyscan program that records its arguments and prints that key. The banner
 * is read from a real TCP server; the real ssh-keyscan meeting a server that only sends a banner
 * gives the banner alone. Silence, garbage and cancel give null promptly.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pickHostKey, probeSsh, sshFingerprint, SSH_KEYSCAN } from '../../src/probes/ssh.js';
import { greetingServer, silentServer, type Listener } from '../scan/native/listeners.js';

const HOST = '127.0.0.1';
const BANNER = 'SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3';

function run(file: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(file, args, { timeout: 20_000 }, (err, out) => (err ? reject(new Error(`${file} failed: ${err.message}`)) : resolve(out))),
  );
}

let dir: string;
let publicKey: { type: string; blob: string; fingerprint: string };
let rsaKey: { type: string; blob: string; fingerprint: string };
let fakeKeyscan: string;

async function makeKey(type: 'ed25519' | 'rsa'): Promise<{ type: string; blob: string; fingerprint: string }> {
  const file = join(dir, `key_${type}`);
  await run('ssh-keygen', ['-q', '-t', type, ...(type === 'rsa' ? ['-b', '2048'] : []), '-N', '', '-C', 'test', '-f', file]);
  const [keyType, blob] = (await readFile(`${file}.pub`, 'utf8')).trim().split(' ');
  // `256 SHA256:… test (ED25519)`: the second field.
  const fingerprint = (await run('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${file}.pub`])).split(' ')[1];
  return { type: keyType, blob, fingerprint };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'netwarden-ssh-'));
  publicKey = await makeKey('ed25519');
  rsaKey = await makeKey('rsa');
  // A stand-in for ssh-keyscan: records its arguments, prints what the real one prints for a host
  // with an RSA and an Ed25519 key (comment line on stderr, key lines on stdout).
  fakeKeyscan = join(dir, 'fake-keyscan.mjs');
  await writeFile(
    fakeKeyscan,
    [
      '#!/usr/bin/env node',
      "import { writeFileSync } from 'node:fs';",
      `writeFileSync(${JSON.stringify(join(dir, 'args.json'))}, JSON.stringify(process.argv.slice(2)));`,
      'const host = process.argv.at(-1);',
      `process.stderr.write('# ' + host + ':22 ${BANNER}\\n');`,
      `process.stdout.write(host + ' ${rsaKey.type} ${rsaKey.blob}\\n' + host + ' ${publicKey.type} ${publicKey.blob}\\n');`,
    ].join('\n'),
  );
  await chmod(fakeKeyscan, 0o755);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const open: Listener[] = [];
async function track(p: Promise<Listener>): Promise<Listener> {
  const value = await p;
  open.push(value);
  return value;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

describe('SSH fingerprints', () => {
  it('match what ssh-keygen -l prints for the same key', () => {
    expect(publicKey.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    expect(sshFingerprint(publicKey.type, publicKey.blob)).toBe(publicKey.fingerprint);
    expect(sshFingerprint(rsaKey.type, rsaKey.blob)).toBe(rsaKey.fingerprint);
  });

  it('refuse a blob that is not a key of the type it claims', () => {
    expect(sshFingerprint('ssh-rsa', publicKey.blob)).toBeNull();
    expect(sshFingerprint('ssh-ed25519', 'not base64!')).toBeNull();
    expect(sshFingerprint('ssh-ed25519', Buffer.from('garbage').toString('base64'))).toBeNull();
  });

  it('prefer the Ed25519 key of ssh-keyscan output, skipping comments and junk', () => {
    const output = `# 10.0.0.1:22 ${BANNER}\n10.0.0.1 ${rsaKey.type} ${rsaKey.blob}\njunk line\n10.0.0.1 ${publicKey.type} ${publicKey.blob}\n`;
    expect(pickHostKey(output)).toEqual({ keyType: 'ssh-ed25519', fingerprint: publicKey.fingerprint });
    expect(pickHostKey(`[10.0.0.1]:2222 ${rsaKey.type} ${rsaKey.blob}\n`)).toEqual({ keyType: 'ssh-rsa', fingerprint: rsaKey.fingerprint });
    expect(pickHostKey('')).toBeNull();
  });
});

describe('SSH probe', () => {
  it('reads the banner (after pre-banner lines) and the host key through ssh-keyscan, run with an argument array', async () => {
    const server = await track(greetingServer(HOST, `Welcome; $(touch /tmp/x)\r\n${BANNER}\r\n`));
    const result = await probeSsh(HOST, server.port, { timeoutMs: 3000, keyscanPath: fakeKeyscan });
    expect(result).toEqual({ port: server.port, banner: BANNER, keyType: 'ssh-ed25519', fingerprint: publicKey.fingerprint });
    const args = JSON.parse(await readFile(join(dir, 'args.json'), 'utf8')) as string[];
    expect(args).toEqual(['-T', '3', '-p', String(server.port), '-t', 'ed25519,ecdsa,rsa', HOST]);
  });

  it('gives the banner alone when ssh-keyscan is absent or gets no key', async () => {
    const server = await track(greetingServer(HOST, `${BANNER}\r\n`));
    expect(await probeSsh(HOST, server.port, { timeoutMs: 1500, keyscanPath: join(dir, 'no-such-program') })).toEqual({
      port: server.port,
      banner: BANNER,
      keyType: null,
      fingerprint: null,
    });
    expect(await probeSsh(HOST, server.port, { timeoutMs: 1500, keyscanPath: null })).toMatchObject({ banner: BANNER, fingerprint: null });
    if (existsSync(SSH_KEYSCAN)) {
      // The real ssh-keyscan meets a server that stops after its banner: no key, and within the bound.
      const started = Date.now();
      expect(await probeSsh(HOST, server.port, { timeoutMs: 1500 })).toMatchObject({ banner: BANNER, fingerprint: null });
      expect(Date.now() - started).toBeLessThan(4000);
    }
  });

  it('returns null for garbage, silence or cancel, promptly', async () => {
    const garbage = await track(greetingServer(HOST, Buffer.alloc(20_000, 0x41)));
    expect(await probeSsh(HOST, garbage.port, { timeoutMs: 1000, keyscanPath: null })).toBeNull();

    const silent = await track(silentServer(HOST));
    const started = Date.now();
    expect(await probeSsh(HOST, silent.port, { timeoutMs: 300, keyscanPath: null })).toBeNull();
    expect(Date.now() - started).toBeLessThan(2000);

    const controller = new AbortController();
    const cancelStart = Date.now();
    const pending = probeSsh(HOST, silent.port, { timeoutMs: 20_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    expect(await pending).toBeNull();
    expect(Date.now() - cancelStart).toBeLessThan(2000);
  });
});
