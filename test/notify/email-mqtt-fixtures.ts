/**
 * What the email and MQTT channel tests share: a composed message to send, and a throw-away
 * self-signed certificate for their TLS tests, made fresh by openssl in a temporary directory
 * (node:crypto makes keys but not X.509 certificates). The certificate names `localhost` and
 * `127.0.0.1`, so a client that trusts it verifies the name as well.
 */
import { expect } from 'vitest';
import { makeSelfSignedCert, type SelfSignedCert } from '../scan/native/listeners.js';
import type { Change } from '../../src/schemas/change.js';
import type { ScanRecord } from '../../src/schemas/scan.js';
import { OutboundGuard } from '../../src/util/outbound.js';
import { DeliveryError, type OutgoingMessage, type SendContext } from '../../src/notify/types.js';

export const SUBNET = '192.168.77.0/24';

export function sampleScan(overrides: Partial<ScanRecord> = {}): ScanRecord {
  return {
    scan_id: 12,
    status: 'completed',
    profile: 'standard',
    subnet: SUBNET,
    scan_type: 'network',
    target: null,
    started_at: '2026-11-25T10:00:00.000Z',
    completed_at: '2026-11-25T10:02:00.000Z',
    duration_seconds: 120,
    devices_found: 7,
    error: null,
    triggered_by: 'schedule:nightly',
    progress: null,
    runner: null,
    agent_id: null,
    warnings: [],
    ports_examined: '1-1000',
    hosts_examined: 7,
    ...overrides,
  };
}

function change(id: number, deviceId: number, ip: string, overrides: Partial<Change>): Change {
  return {
    id,
    scan_id: 12,
    change_type: 'port_opened',
    severity: 'low',
    device_id: deviceId,
    device_ip: ip,
    device_mac: null,
    port: null,
    protocol: null,
    old_value: null,
    new_value: null,
    description: 'something changed',
    detected_at: '2026-11-25T10:02:00.000Z',
    ...overrides,
  };
}

/**
 * A scan.changes message with two devices: a new one whose label carries HTML (it must arrive
 * escaped) and a known one with a device link and an opened port.
 */
export function sampleMessage(overrides: Partial<OutgoingMessage> = {}): OutgoingMessage {
  const added = change(101, 5, '192.168.77.5', {
    change_type: 'device_added',
    severity: 'medium',
    device_mac: 'aa:bb:cc:dd:ee:01',
    description: 'New device 192.168.77.5 <b>joined</b>',
  });
  const opened = change(102, 9, '192.168.77.9', {
    change_type: 'port_opened',
    severity: 'high',
    port: 23,
    protocol: 'tcp',
    new_value: 'telnet',
    description: 'Port 23/tcp opened (telnet)',
  });
  return {
    event: 'scan.changes',
    deliveryId: 42,
    sentAt: '2026-11-25T10:02:05.000Z',
    title: `Netwarden: 2 changes on ${SUBNET}`,
    summary: `2 changes on ${SUBNET}: 1 new device, 1 port opened`,
    groups: [
      { device_id: 5, name: '192.168.77.5 "<script>alert(1)</script>"', url: null, changes: [added] },
      { device_id: 9, name: '192.168.77.9 "NAS"', url: 'https://netwarden.example/devices/9', changes: [opened] },
    ],
    severity: 'high',
    scan: sampleScan(),
    changes: [added, opened],
    ...overrides,
  };
}

/** A SendContext whose signal aborts at `timeoutMs`, as the delivery loop's does. */
export function sendContext(timeoutMs = 5000): SendContext {
  // The allowance the test servers get (NETWARDEN_OUTBOUND_ALLOW: loopback).
  return { signal: AbortSignal.timeout(timeoutMs), version: '0.1.0-test', timeoutMs, guard: OutboundGuard.fromEnvironment(process.env) };
}

/** What a send that must fail rejected with, checked to be a DeliveryError. */
export async function deliveryFailure(promise: Promise<unknown>): Promise<DeliveryError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DeliveryError);
  return error as DeliveryError;
}

export type TestCertificate = SelfSignedCert;

let cached: Promise<TestCertificate> | undefined;

/** One certificate per test file (openssl takes a moment); the email and MQTT TLS tests need openssl. */
export function testCertificate(): Promise<TestCertificate> {
  cached ??= makeSelfSignedCert('localhost', 'DNS:localhost,IP:127.0.0.1').then((cert) => {
    if (!cert) throw new Error('openssl could not make a test certificate (apt-get install openssl)');
    return cert;
  });
  return cached;
}
