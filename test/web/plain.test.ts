/** Server messages in plain words (src/web/plain.ts): setting paths as words, socket codes explained, a field's own refusal. */
import { describe, expect, it } from 'vitest';
import { failingChannels } from '../../src/web/deliveries.js';
import { fieldMessage, pathLabel, plainMessage, plainSocketErrors, unlessField } from '../../src/web/plain.js';

describe('plain words for server messages', () => {
  it('names a setting path in words', () => {
    expect(pathLabel('scanning.port_range')).toBe('Port range');
    expect(pathLabel('notifications.channels.0.config.to.1')).toBe('To, entry 2');
    expect(pathLabel('networks.1')).toBe('Networks, entry 2');
    expect(pathLabel('body')).toBe('');
    expect(plainMessage('scanning.port_range: must be 1-65535')).toBe('Port range: must be 1-65535');
    expect(plainMessage('body: not well-formed XML at line 3')).toBe('Not well-formed XML at line 3');
    expect(plainMessage('Invalid username or password')).toBe('Invalid username or password');
  });

  it('explains socket error codes', () => {
    expect(plainSocketErrors('Could not reach the release feed: connect ECONNREFUSED 127.0.0.1:9')).toBe(
      'Could not reach the release feed: nothing answered at 127.0.0.1:9 (connection refused)',
    );
    expect(plainSocketErrors('getaddrinfo ENOTFOUND ntfy.example')).toBe('the name ntfy.example could not be found (DNS)');
    expect(plainSocketErrors('connect ETIMEDOUT 10.0.0.1:443')).toBe('10.0.0.1:443 did not answer in time');
    expect(plainSocketErrors('HTTP 404 Not Found')).toBe('HTTP 404 Not Found');
  });

  it('gives a 400 about a field to that field, without its path, and leaves the rest to the form', () => {
    // As api.ts's ApiError carries them.
    const apiError = (status: number, detail: string) => Object.assign(new Error(detail), { status, detail });
    const error = apiError(400, 'scanning.port_range: must be ports or ranges such as 1-1000');
    expect(fieldMessage(error, 'scanning.port_range')).toBe('must be ports or ranges such as 1-1000');
    expect(fieldMessage(error, 'network.subnet')).toBeNull();
    expect(unlessField(error, 'scanning.port_range')).toBeNull();
    expect(unlessField(error, 'network.subnet')).toBe(error);
    const entry = apiError(400, 'network.exclude.2: must be an IPv4 CIDR network');
    expect(fieldMessage(entry, 'network.exclude')).toBe('Entry 3: must be an IPv4 CIDR network');
    // Not a refusal of the value: stays with the form.
    expect(fieldMessage(apiError(403, 'scanning.port_range: no'), 'scanning.port_range')).toBeNull();
  });
});

describe('failing channels', () => {
  const delivery = (id: number, channel_id: number, status: 'sent' | 'failed' | 'pending', last_error: string | null = null) => ({
    id,
    channel_id,
    status,
    last_error,
  });

  it('flags a channel whose last two or more finished deliveries failed, with none sent since', () => {
    // Newest first, as the delivery log lists them.
    const failing = failingChannels([
      delivery(9, 1, 'pending'),
      delivery(8, 1, 'failed', 'HTTP 500'),
      delivery(7, 2, 'failed', 'HTTP 404'),
      delivery(6, 1, 'failed', 'HTTP 502'),
      delivery(5, 2, 'sent'),
      delivery(4, 2, 'failed'),
      delivery(3, 3, 'sent'),
      delivery(2, 3, 'failed'),
      delivery(1, 3, 'failed'),
    ]);
    expect([...failing.entries()]).toEqual([[1, { count: 2, lastError: 'HTTP 500' }]]);
  });
});
