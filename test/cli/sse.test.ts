/** The CLI's Server-Sent Events parser (src/cli/sse.ts) against the rules of the standard. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SseParser } from '../../src/cli/sse.js';

describe('SseParser', () => {
  it('parses id, event and data, skips comments and keeps the last id', () => {
    const p = new SseParser();
    const out = p.push(': hello\n\nid: 7\nevent: scan_started\ndata: {"scan_id":1}\n\n: keep-alive\n\ndata: plain\n\n');
    expect(out).toEqual([
      { id: '7', event: 'scan_started', data: '{"scan_id":1}' },
      { id: '7', event: 'message', data: 'plain' },
    ]);
    expect(p.lastEventId).toBe('7');
    expect(p.comments).toBe(2);
  });

  it('joins several data lines, accepts CRLF and CR line ends, and fields without a value or space', () => {
    const p = new SseParser();
    expect(p.push('data:a\r\ndata: b\rdata\r\n\r\nevent:x\rdata:1\r\r')).toEqual([
      { id: null, event: 'message', data: 'a\nb\n' },
      { id: null, event: 'x', data: '1' },
    ]);
  });

  it('does not dispatch an event without data, ignores unknown fields, ids with NUL and bad retry values', () => {
    const p = new SseParser();
    expect(p.push('id: 3\nevent: nothing\n\nfoo: bar\nid: 4\u00005\nretry: 1x\ndata: d\n\nretry: 2500\n\n')).toEqual([
      { id: '3', event: 'message', data: 'd' },
    ]);
    expect(p.lastEventId).toBe('3');
    expect(p.retryMs).toBe(2500);
  });

  it('gives the same events however the stream is cut into chunks, a CRLF split included', () => {
    const stream = 'id: 1\r\nevent: a\r\ndata: {"x":1}\r\n\r\n: c\n\nid: 2\nevent: b\ndata: one\ndata: two\n\nid: 3\rdata: é\r\r';
    const whole = new SseParser().push(stream);
    expect(whole).toHaveLength(3);
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 12 }), (cuts) => {
        const p = new SseParser();
        const bounds = [0, ...cuts.sort((a, b) => a - b), stream.length];
        const out = bounds.slice(1).flatMap((end, i) => p.push(stream.slice(bounds[i], end)));
        expect(out).toEqual(whole);
      }),
    );
  });
});
