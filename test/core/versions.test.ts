import { describe, expect, it } from 'vitest';
import {
  compareVersions,
  compileRange,
  distroIn,
  inRange,
  InvalidVersionRangeError,
  parseVersion,
  parseVersionSpec,
  specInRange,
  type VersionRange,
} from '../../src/core/versions.js';

describe('parseVersion', () => {
  it.each<[string, string, number[], string | null, string | null]>([
    // raw, upstream, release, suffix, distro
    ['9.2p1', '9.2p1', [9, 2], null, null],
    ['1.18.0', '1.18.0', [1, 18, 0], null, null],
    ['2.4.57', '2.4.57', [2, 4, 57], null, null],
    ['8.9p1 Ubuntu 3ubuntu0.10', '8.9p1', [8, 9], 'Ubuntu 3ubuntu0.10', 'Ubuntu'],
    ['9.2p1 Debian-2+deb12u3', '9.2p1', [9, 2], 'Debian-2+deb12u3', 'Debian'],
    ['7.9p1 Debian 10+deb10u2', '7.9p1', [7, 9], 'Debian 10+deb10u2', 'Debian'],
    ['8.4p1 Raspbian-5+deb11u3', '8.4p1', [8, 4], 'Raspbian-5+deb11u3', 'Raspbian'],
    ['9.3 FreeBSD-20230719', '9.3', [9, 3], 'FreeBSD-20230719', 'FreeBSD'],
    ['10.3.39-MariaDB-0+deb12u1', '10.3.39', [10, 3, 39], 'MariaDB-0+deb12u1', 'Debian'],
    ['8.0.35-0ubuntu0.22.04.1', '8.0.35', [8, 0, 35], '0ubuntu0.22.04.1', 'Ubuntu'],
    ['2.4.6-99.el7.centos.1', '2.4.6', [2, 4, 6], '99.el7.centos.1', 'CentOS'],
    ['7.4p1-21.el7', '7.4p1', [7, 4], '21.el7', 'Red Hat'],
    ['5.7.44-log', '5.7.44', [5, 7, 44], 'log', null],
    ['1.3.5rc2', '1.3.5rc2', [1, 3, 5], null, null],
    ['1.3.5a', '1.3.5a', [1, 3, 5], null, null],
    ['2.3.4', '2.3.4', [2, 3, 4], null, null],
    ['7.0.15', '7.0.15', [7, 0, 15], null, null],
    ['0.9.9.9', '0.9.9.9', [0, 9, 9, 9], null, null],
    ['2022.83', '2022.83', [2022, 83], null, null],
    ['V4.92', '4.92', [4, 92], null, null],
    ['1:8.9p1', '8.9p1', [8, 9], null, null],
    ['1.00-pre7', '1.00-pre7', [1, 0], null, null],
    ['1.0.0-rc1', '1.0.0-rc1', [1, 0, 0], null, null],
    ['0.9.41 beta', '0.9.41 beta', [0, 9, 41], null, null],
    ['9.4.44.v20210927', '9.4.44.v20210927', [9, 4, 44], null, null],
    ['2.25b 29dec2003', '2.25b', [2, 25], '29dec2003', null],
    ['  2.4.49 (Unix)  ', '2.4.49', [2, 4, 49], '(Unix)', null],
  ])('%s', (raw, upstream, release, suffix, distro) => {
    const v = parseVersion(raw);
    expect(v).not.toBeNull();
    expect(v!.upstream).toBe(upstream);
    expect(v!.release).toEqual(release);
    expect(v!.suffix).toBe(suffix);
    expect(v!.distro).toBe(distro);
  });

  it.each([[''], ['   '], ['unknown'], ['3.X - 4.X'], ['4.x'], ['X.Y'], [null], [undefined], ['v'], ['p1'], ['x'.repeat(200)]])(
    'is null for %j',
    (raw) => {
      expect(parseVersion(raw)).toBeNull();
    },
  );
});

describe('compareVersions', () => {
  // Each list is in strictly increasing order; every pair is checked both ways.
  const orders: [string, string[]][] = [
    [
      'OpenSSH portable patch levels',
      ['4.3p2', '4.4', '4.4p1', '8.5p1', '9.2p1', '9.3', '9.3p1', '9.3p2', '9.7p1', '9.8', '9.8p1', '9.9p1', '9.9p2', '10.0p1'],
    ],
    ['numeric parts, not text', ['1.4.4', '1.4.33', '1.18.0', '1.20.1', '1.100.0', '2.4.9', '2.4.10', '2.4.49', '2.4.57']],
    [
      'ProFTPD pre- and post-releases',
      [
        '1.3.3',
        '1.3.3c',
        '1.3.3g',
        '1.3.5rc1',
        '1.3.5rc2',
        '1.3.5rc4',
        '1.3.5',
        '1.3.5a',
        '1.3.5b',
        '1.3.5e',
        '1.3.6rc1',
        '1.3.6',
        '1.3.6b',
        '1.3.7rc2',
        '1.3.7',
        '1.3.7a',
      ],
    ],
    ['pre-release kinds', ['2.0dev1', '2.0a1', '2.0alpha2', '2.0b1', '2.0beta2', '2.0pre1', '2.0rc1', '2.0rc2', '2.0', '2.0.1']],
    ['separated pre-releases', ['1.0.0-alpha', '1.0.0-beta.2', '1.0.0-rc1', '1.0.0']],
    ['BusyBox pre-releases', ['0.61', '1.00-pre7', '1.00', '1.0.1', '1.19.4', '1.25.0']],
    ['Dropbear year.release', ['0.52', '2011.54', '2012.55', '2016.72', '2016.74', '2022.82', '2022.83', '2024.84']],
    ['Exim', ['4.87', '4.89', '4.89.1', '4.90', '4.90.1', '4.91', '4.92', '4.92.1', '4.92.2', '4.92.3', '4.94.2', '4.96.1']],
    ['Dovecot four-part versions', ['2.2.36', '2.2.36.3', '2.2.36.4', '2.3.0', '2.3.5.1', '2.3.7.2', '2.3.11.3']],
    ['MiniUPnPd date releases', ['1.0', '1.4', '1.9', '2.1', '2.1.20190408', '2.2.0']],
    ['thttpd letter releases', ['2.25', '2.25b', '2.26']],
    ['Samba release candidates', ['4.1.17', '4.2.0rc1', '4.2.0rc4', '4.2.0rc5', '4.2.0', '4.2.11']],
    ['distribution suffixes are ignored', ['8.9p1 Ubuntu 3ubuntu0.10', '9.2p1 Debian-2+deb12u3', '9.6p1 Ubuntu 3ubuntu13.5']],
  ];
  for (const [name, list] of orders) {
    it(name, () => {
      for (let i = 0; i < list.length; i++) {
        for (let j = 0; j < list.length; j++) {
          const expected = i < j ? -1 : i > j ? 1 : 0;
          expect([list[i], list[j], compareVersions(list[i], list[j])]).toEqual([list[i], list[j], expected]);
        }
      }
    });
  }

  it.each([
    ['9.3', '9.3.0'],
    ['1.0', '1.0.0.0'],
    ['V4.92', '4.92'],
    ['8.9p1 Ubuntu 3ubuntu0.10', '8.9p1'],
    ['10.3.39-MariaDB-0+deb12u1', '10.3.39'],
    ['5.7.44-log', '5.7.44'],
    ['9.4.44.v20210927', '9.4.44'],
    ['1:8.9p1', '8.9p1'],
    ['1.00', '1.0'],
    ['1.3.5RC2', '1.3.5rc2'],
  ])('%s = %s', (a, b) => {
    expect(compareVersions(a, b)).toBe(0);
    expect(compareVersions(b, a)).toBe(0);
  });

  it('orders strings that are not versions deterministically', () => {
    expect(compareVersions('unknown', 'unknown')).toBe(0);
    expect(compareVersions('abc', 'abd')).toBe(-1);
    expect(compareVersions('build 10', 'build 9')).toBe(1);
  });
});

describe('inRange', () => {
  const R = (r: VersionRange): VersionRange => r;
  it.each<[string | null, VersionRange, boolean | null]>([
    // regreSSHion: versionStartIncluding 8.5p1, versionEndExcluding 9.8p1
    ['8.5p1', R({ versionStartIncluding: '8.5p1', versionEndExcluding: '9.8p1' }), true],
    ['8.4p1', R({ versionStartIncluding: '8.5p1', versionEndExcluding: '9.8p1' }), false],
    ['9.7p1', R({ versionStartIncluding: '8.5p1', versionEndExcluding: '9.8p1' }), true],
    ['9.8', R({ versionStartIncluding: '8.5p1', versionEndExcluding: '9.8p1' }), true],
    ['9.8p1', R({ versionStartIncluding: '8.5p1', versionEndExcluding: '9.8p1' }), false],
    ['8.9p1 Ubuntu 3ubuntu0.10', R({ versionStartIncluding: '8.5p1', versionEndExcluding: '9.8p1' }), true],
    // NVD writes OpenSSH bounds without the patch level: < 9.8 excludes 9.8p1, includes 9.7p1.
    ['9.7p1', R({ versionEndExcluding: '9.8' }), true],
    ['9.8p1', R({ versionEndExcluding: '9.8' }), false],
    ['7.7p1', R({ versionEndIncluding: '7.7' }), false],
    ['7.7p1', R({ versionEndIncluding: '7.7p1' }), true],
    // exact versions
    ['2.3.4', R({ version: '2.3.4' }), true],
    ['2.3.4 ', R({ version: '2.3.4' }), true],
    ['2.3.5', R({ version: '2.3.4' }), false],
    ['1.3.5', R({ version: '1.3.5' }), true],
    ['1.3.5a', R({ version: '1.3.5' }), false],
    ['1.3.5rc2', R({ version: '1.3.5' }), false],
    ['6.0', R({ version: '6.0' }), true],
    // start excluding / end including
    ['2.4.0', R({ versionStartExcluding: '2.4.0', versionEndIncluding: '2.4.48' }), false],
    ['2.4.1', R({ versionStartExcluding: '2.4.0', versionEndIncluding: '2.4.48' }), true],
    ['2.4.48', R({ versionStartExcluding: '2.4.0', versionEndIncluding: '2.4.48' }), true],
    ['2.4.49', R({ versionStartExcluding: '2.4.0', versionEndIncluding: '2.4.48' }), false],
    // branch ranges
    ['4.5.9', R({ versionStartIncluding: '4.5.0', versionEndExcluding: '4.5.10' }), true],
    ['4.5.10', R({ versionStartIncluding: '4.5.0', versionEndExcluding: '4.5.10' }), false],
    ['4.6.3', R({ versionStartIncluding: '4.5.0', versionEndExcluding: '4.5.10' }), false],
    ['10.3.27-MariaDB-0+deb10u1', R({ versionStartIncluding: '10.3.0', versionEndExcluding: '10.3.28' }), true],
    ['5.7.14-log', R({ versionStartIncluding: '5.7.0', versionEndExcluding: '5.7.15' }), true],
    // no bounds: every version
    ['1.0', R({}), true],
    // unknown version: neither yes nor no
    [null, R({ versionEndExcluding: '9.8p1' }), null],
    ['unknown', R({ versionEndExcluding: '9.8p1' }), null],
    ['3.X - 4.X', R({ versionEndExcluding: '4.6.4' }), null],
  ])('%j in %j → %j', (version, range, expected) => {
    expect(inRange(version, range)).toBe(expected);
  });

  it('accepts a compiled range', () => {
    const compiled = compileRange({ versionStartIncluding: '8.5p1', versionEndExcluding: '9.8p1' });
    expect(inRange('9.6p1', compiled)).toBe(true);
    expect(inRange('9.9p1', compiled)).toBe(false);
  });

  it.each<[VersionRange, RegExp]>([
    [{ version: '1.0', versionEndExcluding: '2.0' }, /exact version/],
    [{ versionStartIncluding: '1.0', versionStartExcluding: '1.0' }, /two start/],
    [{ versionEndIncluding: '1.0', versionEndExcluding: '2.0' }, /two end/],
    [{ versionEndExcluding: 'latest' }, /not a version/],
  ])('rejects %j', (range, message) => {
    expect(() => compileRange(range)).toThrow(InvalidVersionRangeError);
    expect(() => compileRange(range)).toThrow(message);
  });
});

describe('version specs reported by nmap', () => {
  const range = compileRange({ versionStartIncluding: '9.6.0', versionEndExcluding: '9.6.20' });
  it.each<[string | null, 'yes' | 'no' | 'unknown']>([
    ['9.6.7', 'yes'],
    ['9.6.7 - 9.6.12', 'yes'],
    ['9.6.12 - 9.6.7', 'yes'],
    ['9.6.16 - 9.6.24', 'unknown'],
    ['9.6.20 - 9.6.23', 'no'],
    ['9.5.0 - 9.5.9', 'no'],
    ['9.5.0 - 9.7.0', 'unknown'],
    ['9.6.0 or later', 'unknown'],
    ['9.6.4 - 9.6.6 or 9.6.13 - 9.6.19', 'unknown'],
    ['3.X - 4.X', 'unknown'],
    ['', 'unknown'],
    [null, 'unknown'],
  ])('%j → %s', (spec, expected) => {
    expect(specInRange(parseVersionSpec(spec), range)).toBe(expected);
  });

  it('reads an exact version with a distribution suffix as exact', () => {
    const spec = parseVersionSpec('8.9p1 Ubuntu 3ubuntu0.10');
    expect(spec.kind).toBe('exact');
  });

  it('an exact affected version inside a reported range is unknown, outside is no', () => {
    const exact = compileRange({ version: '2.3.4' });
    expect(specInRange(parseVersionSpec('2.3.0 - 2.3.9'), exact)).toBe('unknown');
    expect(specInRange(parseVersionSpec('3.0.0 - 3.0.5'), exact)).toBe('no');
  });
});

describe('distroIn', () => {
  it.each([
    ['Ubuntu Linux; protocol 2.0', 'Ubuntu'],
    ['(Debian)', 'Debian'],
    ['(CentOS)', 'CentOS'],
    ['(Red Hat Enterprise Linux)', 'Red Hat'],
    ['package 1:10.11.6+maria~deb12', 'Debian'],
    ['10.1.44-MariaDB-1~bionic', 'Ubuntu'],
    ['(Debian bookworm)', 'Debian'],
    ['protocol 2.0', null],
    ['(Unix)', null],
    ['workgroup: WORKGROUP', null],
    [null, null],
  ])('%j → %j', (text, expected) => {
    expect(distroIn(text)).toBe(expected);
  });
});
