import { describe, expect, it } from 'vitest';
import { TLS_PORTS, TLS_SERVICE_NAMES, TLS_WRAPPED_NAMES, tlsPortsOf, wellKnownService } from '../../src/core/ports.js';

describe('port tables', () => {
  it("tlsPortsOf gives a protocol's implicit-TLS ports, which the risk rules use for their TLS forms", () => {
    expect(tlsPortsOf('ldap')).toEqual([636, 3269]);
    expect(tlsPortsOf('ftp')).toEqual([990]); // 989 carries FTPS data, not the control channel
    expect(tlsPortsOf('telnet')).toEqual([992]);
    expect(tlsPortsOf('ssh')).toEqual([]);
    for (const port of [...tlsPortsOf('http'), ...tlsPortsOf('docker')]) expect(TLS_PORTS.has(port)).toBe(true);
  });

  it("every protocol's TLS name counts as TLS-wrapped, and the plain names do not", () => {
    for (const [plain, wrapped] of Object.entries(TLS_SERVICE_NAMES)) {
      expect(TLS_WRAPPED_NAMES.has(wrapped), wrapped).toBe(true);
      expect(TLS_WRAPPED_NAMES.has(plain), plain).toBe(false);
    }
  });

  it('names the TLS ports the port table knows by their TLS-wrapped names', () => {
    expect(wellKnownService(443)).toBe('https');
    expect(wellKnownService(993)).toBe('imaps');
    expect(TLS_PORTS.has(993)).toBe(true);
    expect(TLS_PORTS.has(143)).toBe(false);
  });
});
