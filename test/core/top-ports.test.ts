import { describe, expect, it } from 'vitest';
import { BUILTIN_FREQUENT_PORTS, HOME_SERVICE_PORTS, parseNmapServices, scanPortList, topPorts, unionPorts } from '../../src/core/top-ports.js';
import { formatPortRanges, parsePortRanges } from '../../src/core/net.js';
import { validateSettings, defaultSettings } from '../../src/core/settings.js';
import { TOP_PORTS } from '../../src/core/limits.js';

// Lines in nmap-services' format (made up for the test; not nmap's data).
const SERVICES = [
  '# a comment line',
  'tcpmux\t1/tcp\t0.001995\t# TCP Port Service Multiplexer',
  'tcpmux\t1/udp\t0.001236',
  'http\t80/tcp\t0.484143\t# World Wide Web HTTP',
  'http-proxy\t8080/tcp\t0.042052\t# http-alt',
  'ms-wbt-server\t3389/tcp\t0.083904',
  'blackice-icecap\t8081/tcp\t0.042052',
  'domain\t53/udp\t0.213496',
  'noscore\t4000/tcp',
  'broken line',
  'bad\t70000/tcp\t0.5',
  'dup-low\t80/tcp\t0.000001',
  'sctp\t80/sctp\t0.9',
  '',
].join('\n');

describe('parseNmapServices', () => {
  it('ranks TCP ports by frequency, ties by port number, skipping other protocols and malformed lines', () => {
    expect(parseNmapServices(SERVICES)).toEqual([80, 3389, 8080, 8081, 1]);
  });

  it('gives nothing for a file without TCP ports', () => {
    expect(parseNmapServices('# only comments\nsnmp\t161/udp\t0.4\n')).toEqual([]);
    expect(parseNmapServices('')).toEqual([]);
  });

  it('accepts frequencies in exponent form', () => {
    expect(parseNmapServices('a\t10/tcp\t1e-05\nb\t11/tcp\t0.001\n')).toEqual([11, 10]);
  });
});

describe('the built-in ranking', () => {
  it('lists distinct valid ports and includes the ports nmap 1-1000 misses', () => {
    expect(new Set(BUILTIN_FREQUENT_PORTS).size).toBe(BUILTIN_FREQUENT_PORTS.length);
    for (const p of BUILTIN_FREQUENT_PORTS) expect(p >= 1 && p <= 65535).toBe(true);
    for (const p of [3389, 5900, 6379, 8080, 8123, 32400]) expect(BUILTIN_FREQUENT_PORTS).toContain(p);
  });
});

describe('topPorts and unionPorts', () => {
  it('takes the first N of the ranking plus the home service ports, nothing for 0', () => {
    expect(topPorts(0, [80, 443])).toEqual([]);
    expect(topPorts(1, [80, 443])).toEqual([80, ...HOME_SERVICE_PORTS]);
    expect(topPorts(5, [80, 443])).toEqual([80, 443, ...HOME_SERVICE_PORTS]);
  });

  it('merges ranges and single ports into sorted, compact ranges', () => {
    expect(unionPorts([{ low: 1, high: 1000 }], [8080, 22, 1001, 3389, 8081, 80])).toEqual([
      { low: 1, high: 1001 },
      { low: 3389, high: 3389 },
      { low: 8080, high: 8081 },
    ]);
    expect(unionPorts([], [])).toEqual([]);
  });
});

describe('scanPortList', () => {
  const ranking = [80, 3389, 8080, 443, 5900];

  it('adds the top ports to port_range for the normal profile, as one compact nmap -p list', () => {
    const list = scanPortList({ port_range: '1-1000', top_ports: 3 }, 'normal', ranking);
    const expected = parsePortRanges(['1-1000', '3389', '8080', ...HOME_SERVICE_PORTS.map(String)].join(','));
    expect(expected.ok && list).toEqual(expected.ok && expected.value);
    expect(formatPortRanges(list)).toMatch(/^1-1000,.*3389.*8080/);
  });

  it('scans port_range alone with top_ports 0, every port for intensive scans', () => {
    expect(scanPortList({ port_range: '1-1000', top_ports: 0 }, 'normal', ranking)).toEqual([{ low: 1, high: 1000 }]);
    expect(scanPortList({ port_range: '22,80', top_ports: 1000 }, 'intensive', ranking)).toEqual([{ low: 1, high: 65535 }]);
  });

  it('a quick scan gets the normal list (it examines no port, but the list is the same)', () => {
    expect(scanPortList({ port_range: '1-10', top_ports: 1 }, 'quick', ranking)).toEqual(
      scanPortList({ port_range: '1-10', top_ports: 1 }, 'normal', ranking),
    );
  });
});

describe('scanning.top_ports setting', () => {
  const withTop = (value: unknown) => {
    const s = defaultSettings() as unknown as { scanning: Record<string, unknown> };
    s.scanning.top_ports = value;
    return validateSettings(s);
  };

  it('defaults to 1000 and accepts the bounds', () => {
    expect(defaultSettings().scanning.top_ports).toBe(1000);
    expect(withTop(TOP_PORTS.min).ok).toBe(true);
    expect(withTop(TOP_PORTS.max).ok).toBe(true);
  });

  it.each([-1, TOP_PORTS.max + 1, 1.5, '100', null])('refuses %j naming the key', (value) => {
    const result = withTop(value);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toMatch(/^scanning\.top_ports: /);
  });
});
