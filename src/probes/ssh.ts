/**
 * One SSH port: the server's identification line (it speaks first; we read its first `SSH-` line
 * and close, sending nothing) and its host key, fetched by OpenSSH's own `ssh-keyscan` run with an
 * argument array (no shell), fingerprinted as `ssh-keygen -l` prints it: `SHA256:` and the unpadded
 * base64 of the sha256 of the key blob. Without ssh-keyscan the banner alone is reported.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import net from 'node:net';
import type { SshResult } from '../core/probe-results.js';
import { deadlineSignal, isUnicastHost, quietly, settleOnce, timeoutOf, type ProbeOptions } from './common.js';
import { cleanText } from './text.js';

export const SSH_KEYSCAN = '/usr/bin/ssh-keyscan';

/** RFC 4253 §4.2: lines before the identification are allowed; this much is plenty. */
const MAX_GREETING_BYTES = 8 * 1024;
/** ssh-keyscan prints one line per key type: a few KiB at most. */
const MAX_KEYSCAN_BYTES = 64 * 1024;

/** The key types asked, in the order one is chosen as the host's identity. */
const KEY_PREFERENCE = ['ssh-ed25519', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'ssh-rsa'];

export interface SshProbeOptions extends ProbeOptions {
  /** The ssh-keyscan program; null skips the host key. Default /usr/bin/ssh-keyscan. */
  keyscanPath?: string | null;
}

/** `SHA256:…` of a base64 key blob as ssh-keygen -l prints it; null when the blob is not one of `keyType`. */
export function sshFingerprint(keyType: string, base64Blob: string): string | null {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64Blob)) return null;
  const blob = Buffer.from(base64Blob, 'base64');
  // The blob starts with its own type as an SSH string: a key that says another type is garbage.
  if (blob.length < 4) return null;
  const length = blob.readUInt32BE(0);
  if (length > 64 || 4 + length > blob.length || blob.subarray(4, 4 + length).toString('latin1') !== keyType) return null;
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** The preferred key of ssh-keyscan's output (`host type base64` lines; `#` lines are comments). */
export function pickHostKey(output: string): { keyType: string; fingerprint: string } | null {
  const keys = new Map<string, string>();
  for (const line of output.split('\n').slice(0, 64)) {
    if (!line || line.startsWith('#')) continue;
    const [, type, blob] = line.trim().split(/\s+/);
    if (!type || !blob || keys.has(type)) continue;
    const fingerprint = sshFingerprint(type, blob);
    if (fingerprint) keys.set(type, fingerprint);
  }
  for (const type of KEY_PREFERENCE) {
    const fingerprint = keys.get(type);
    if (fingerprint) return { keyType: type, fingerprint };
  }
  const [other] = keys;
  return other ? { keyType: other[0], fingerprint: other[1] } : null;
}

/** The server's `SSH-` identification line, or null. */
function readBanner(host: string, port: number, signal: AbortSignal): Promise<string | null> {
  if (signal.aborted) return Promise.resolve(null);
  return new Promise((resolve) => {
    let buffered = '';
    const finish = settleOnce<string>(signal, resolve, () => socket.destroy());
    const socket = net.connect({ host, port });
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline).replace(/\r$/, '');
        buffered = buffered.slice(newline + 1);
        if (line.startsWith('SSH-')) return finish(cleanText(line, 255));
      }
      if (buffered.length > MAX_GREETING_BYTES) finish(null);
    });
    socket.on('error', () => finish(null));
    socket.on('close', () => finish(buffered.startsWith('SSH-') ? cleanText(buffered, 255) : null));
  });
}

/** ssh-keyscan's output, or null (absent program, failure, time up, cancel). */
function keyscan(path: string, host: string, port: number, timeoutMs: number, signal: AbortSignal): Promise<string | null> {
  if (signal.aborted) return Promise.resolve(null);
  // -T is whole seconds; the probe's own deadline (the signal) cuts it shorter when needed.
  const seconds = String(Math.max(1, Math.ceil(timeoutMs / 1000)));
  return new Promise((resolve) => {
    execFile(
      path,
      ['-T', seconds, '-p', String(port), '-t', 'ed25519,ecdsa,rsa', host],
      { signal, timeout: timeoutMs + 500, maxBuffer: MAX_KEYSCAN_BYTES, killSignal: 'SIGKILL', windowsHide: true },
      (error, stdout) => {
        // ssh-keyscan exits 1 when a key type failed yet prints the others: keep what it printed.
        if (typeof stdout === 'string' && stdout.length > 0) resolve(stdout);
        else resolve(error ? null : '');
      },
    );
  });
}

export async function probeSsh(host: string, port: number, options: SshProbeOptions = {}): Promise<SshResult | null> {
  if (!isUnicastHost(host) || !Number.isInteger(port) || port < 1 || port > 65535) return null;
  return quietly(() => run(host, port, options));
}

async function run(host: string, port: number, options: SshProbeOptions): Promise<SshResult | null> {
  const signal = deadlineSignal(options);
  const path = options.keyscanPath === undefined ? SSH_KEYSCAN : options.keyscanPath;
  const [banner, scanned] = await Promise.all([
    readBanner(host, port, signal),
    path ? keyscan(path, host, port, timeoutOf(options), signal) : Promise.resolve(null),
  ]);
  const key = scanned ? pickHostKey(scanned) : null;
  if (!banner && !key) return null;
  return { port, banner, keyType: key?.keyType ?? null, fingerprint: key?.fingerprint ?? null };
}
