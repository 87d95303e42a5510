import { describe, expect, it } from 'vitest';
import { expandTargets } from '../../../src/engines/native/targets.js';

describe('expandTargets', () => {
  it('lists the hosts of a block without its network and broadcast addresses', () => {
    expect(expandTargets('192.168.1.0/29')).toEqual(['192.168.1.1', '192.168.1.2', '192.168.1.3', '192.168.1.4', '192.168.1.5', '192.168.1.6']);
    expect(expandTargets('192.168.1.0/24')).toHaveLength(254);
  });

  it('keeps both addresses of a /31 and the one of a /32', () => {
    expect(expandTargets('127.0.0.2/31')).toEqual(['127.0.0.2', '127.0.0.3']);
    expect(expandTargets('10.0.0.7/32')).toEqual(['10.0.0.7']);
    expect(expandTargets('10.0.0.7')).toEqual(['10.0.0.7']);
  });

  it('leaves out excluded addresses and blocks, overlapping or not', () => {
    expect(expandTargets('10.0.0.0/28', ['10.0.0.2', '10.0.0.4/30', '10.0.0.6/31', '192.168.0.0/16'])).toEqual([
      '10.0.0.1',
      '10.0.0.3',
      '10.0.0.8',
      '10.0.0.9',
      '10.0.0.10',
      '10.0.0.11',
      '10.0.0.12',
      '10.0.0.13',
      '10.0.0.14',
    ]);
    expect(expandTargets('10.0.0.0/24', ['10.0.0.0/16'])).toEqual([]);
    expect(expandTargets('10.0.0.0/30', [' ', ''])).toEqual(['10.0.0.1', '10.0.0.2']);
  });

  it('normalises host bits and handles a /16 quickly', () => {
    expect(expandTargets('10.1.2.3/30')).toEqual(['10.1.2.1', '10.1.2.2']);
    const started = performance.now();
    const all = expandTargets('10.20.0.0/16', ['10.20.5.0/24']);
    expect(all).toHaveLength(65534 - 256);
    expect(all[0]).toBe('10.20.0.1');
    expect(all[all.length - 1]).toBe('10.20.255.254');
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('rejects invalid input', () => {
    expect(() => expandTargets('10.0.0.0/33')).toThrow(/Invalid target/);
    expect(() => expandTargets('10.0.0.0/24', ['nope'])).toThrow(/Invalid target 'nope'/);
  });
});
