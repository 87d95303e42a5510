import { describe, expect, it } from 'vitest';
import { nmapCoverage, portScanArgs, udpScanArgs, type PortScanOptions } from '../../src/core/nmap-args.js';
import { parseCoverage } from '../../src/core/coverage.js';

const base: PortScanOptions = {
  profile: 'normal',
  ports: '1-1000,udp:53,161',
  osDetection: false,
  privileged: true,
  resolveHostnames: false,
  hostTimeoutSeconds: 300,
};

function after(args: string[], flag: string): string | undefined {
  return args[args.indexOf(flag) + 1];
}

describe('nmap port-scan arguments with UDP ports', () => {
  it('scans the TCP ports in one run and the UDP ports in another, without version detection', () => {
    const tcp = portScanArgs(base);
    expect(tcp).toContain('-sS');
    expect(tcp).not.toContain('-sU');
    expect(after(tcp, '-p')).toBe('1-1000');
    const udp = udpScanArgs(base)!;
    expect(udp.slice(0, 2)).toEqual(['-sU', '-Pn']);
    expect(after(udp, '-p')).toBe('53,161');
    expect(udp).not.toContain('-sV');
    expect(udp).toContain('-n');
    expect(udp.slice(-2)).toEqual(['-iL', '-']);
  });

  it('intensive scans every TCP port and still only the listed UDP ports', () => {
    const options = { ...base, profile: 'intensive' as const };
    expect(after(portScanArgs(options), '-p')).toBe('1-65535');
    expect(after(udpScanArgs(options)!, '-p')).toBe('53,161');
  });

  it('has no UDP run without UDP ports or without privileges', () => {
    expect(udpScanArgs({ ...base, ports: '1-1000' })).toBeNull();
    expect(udpScanArgs({ ...base, privileged: false })).toBeNull();
    expect(portScanArgs({ ...base, privileged: false })).toContain('-sT');
  });

  it('checks hosts only thought to be up with the discovery probes in the UDP run too', () => {
    const udp = udpScanArgs({ ...base, verifyUp: true })!;
    expect(udp).not.toContain('-Pn');
    expect(udp.some((a) => a.startsWith('-PS'))).toBe(true);
  });
});

describe('nmapCoverage', () => {
  const coverage = (text: string) => {
    const parsed = parseCoverage(text);
    if (!parsed.ok) throw new Error(parsed.error);
    return parsed.value;
  };

  it('examines everything when privileged', () => {
    expect(nmapCoverage(coverage('1-1000,udp:53,161'), true)).toEqual({ coverage: coverage('1-1000,udp:53,161'), warning: null });
  });

  it('leaves the UDP ports out unprivileged, and says so', () => {
    const result = nmapCoverage(coverage('1-1000,udp:53,161'), false);
    expect(result.coverage).toEqual(coverage('1-1000'));
    expect(result.warning).toContain('UDP ports 53,161 were not examined');
    expect(result.warning).toContain('scanning.engine "native"');
  });

  it('has nothing to say without UDP ports', () => {
    expect(nmapCoverage(coverage('22,80'), false)).toEqual({ coverage: coverage('22,80'), warning: null });
  });
});
