import { describe, expect, it } from 'vitest';
import {
  covers,
  describeCoverage,
  examineSegments,
  formatCoverage,
  noFindingStatement,
  parseCoverage,
  parseSegments,
  segmentsCoverage,
  subtractCoverage,
  type PortCoverage,
} from '../../src/core/coverage.js';

const read = (text: string): PortCoverage => {
  const parsed = parseCoverage(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
};

describe('port lists with protocols', () => {
  it('reads TCP without a prefix and UDP after udp: (nmap-style, T:/U: too), and writes them back canonically', () => {
    expect(read('1-1000,1883,8080')).toEqual({
      tcp: [
        { low: 1, high: 1000 },
        { low: 1883, high: 1883 },
        { low: 8080, high: 8080 },
      ],
      udp: [],
    });
    expect(read('udp:53,161')).toEqual({
      tcp: [],
      udp: [
        { low: 53, high: 53 },
        { low: 161, high: 161 },
      ],
    });
    expect(formatCoverage(read('22,udp:161,53,tcp:80,21-23'))).toBe('21-23,80,udp:53,161');
    expect(formatCoverage(read('T:1-10,U:53'))).toBe('1-10,udp:53');
    expect(formatCoverage(read(''))).toBe('');
    const bad = parseCoverage('udp:70000');
    expect(bad.ok).toBe(false);
  });

  it('tells which ports lie in it, by protocol', () => {
    const c = read('1-1000,8080,udp:53');
    expect([
      covers(c, 22, 'tcp'),
      covers(c, 8080, 'TCP'),
      covers(c, 8081, 'tcp'),
      covers(c, 53, 'udp'),
      covers(c, 22, 'udp'),
      covers(c, 22, 'sctp'),
    ]).toEqual([true, true, false, true, false, false]);
    expect(formatCoverage(subtractCoverage(read('1-1000,udp:53,161'), read('22,500-600,udp:53')))).toBe('1-21,23-499,601-1000,udp:161');
  });

  it('describes a list in words, short', () => {
    expect(describeCoverage(read('1-1000,8080'))).toBe('TCP ports 1–1000, 8080');
    expect(describeCoverage(read('22'))).toBe('TCP port 22');
    expect(describeCoverage(read('1-65535,udp:53,161'))).toBe('all TCP ports and UDP ports 53, 161');
    expect(describeCoverage(read('1,3,5,7,9,11'))).toBe('TCP ports 1, 3, 5, 7 and 2 more');
  });
});

describe('a device coverage', () => {
  it('keeps, per port, the scan that last examined it; a scan examining all of a segment replaces it', () => {
    let segments = examineSegments([], 1, '2026-11-25T10:00:00.000Z', read('1-1000,3306'));
    segments = examineSegments(segments, 2, '2026-11-26T10:00:00.000Z', read('22'));
    expect(segments).toEqual([
      { scan_id: 2, at: '2026-11-26T10:00:00.000Z', ports: '22' },
      { scan_id: 1, at: '2026-11-25T10:00:00.000Z', ports: '1-21,23-1000,3306' },
    ]);
    expect(formatCoverage(segmentsCoverage(segments))).toBe('1-1000,3306');
    // The same scan again (a retried upload) replaces its own segment.
    expect(examineSegments(segments, 2, '2026-11-26T10:00:00.000Z', read('22'))).toEqual(segments);
    segments = examineSegments(segments, 3, '2026-11-27T10:00:00.000Z', read('1-1000,3306'));
    expect(segments).toEqual([{ scan_id: 3, at: '2026-11-27T10:00:00.000Z', ports: '1-1000,3306' }]);
    expect(parseSegments(JSON.stringify(segments))).toEqual(segments);
    expect(parseSegments('not json')).toEqual([]);
    expect(parseSegments('[{"scan_id":"x"}]')).toEqual([]);
  });

  it('says what "no finding" covers and when, from the segments', () => {
    const segments = examineSegments(examineSegments([], 1, '2026-11-25T10:00:00.000Z', read('1-1000')), 2, '2026-11-26T14:30:59.000Z', read('22'));
    expect(noFindingStatement(segments)).toBe(
      'No risky services or known vulnerabilities found in TCP port 22 (scan #2, 2026-11-26 14:30 UTC); TCP ports 1–21, 23–1000 (scan #1, 2026-11-25 10:00 UTC)',
    );
    expect(noFindingStatement([])).toMatch(/no port of this device has been examined yet/);
  });
});
