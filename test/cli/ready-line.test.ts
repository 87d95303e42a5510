/**
 * The start-up line (issue 23 §5): `netwarden serve` says where to open it in plain text, once, as
 * the first line of standard output, before the JSON lines of its start-up (held back until then);
 * log readers that parse JSON skip it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliDatastores, startServe, type CliDatastore, type ServeProcess } from './helpers.js';

describe('netwarden serve start-up line', () => {
  let ds: CliDatastore;
  let serve: ServeProcess;

  beforeAll(async () => {
    ds = await cliDatastores()[0].create();
    serve = await startServe(ds);
  });
  afterAll(async () => {
    await serve?.stop();
    await ds?.cleanup();
  });

  it('says "Netwarden is ready: open <url>" once, as the first line of stdout, before every JSON log line', () => {
    const out = serve.output();
    const ready = out.split('\n').filter((line) => line.includes('Netwarden is ready'));
    expect(ready).toEqual([`Netwarden is ready: open ${serve.baseUrl}`]);
    expect(out.indexOf(ready[0])).toBeLessThan(out.indexOf('"msg":"netwarden listening"'));
    const stdoutLines = out.split('\n').filter((line) => line.trim() && !serve.stderr().includes(line));
    expect(stdoutLines[0]).toBe(ready[0]);
    // The start-up's own lines were held back, not lost: they follow it, in order.
    const messages = stdoutLines.slice(1).map((line) => JSON.parse(line).msg);
    expect(messages.indexOf('database ready')).toBeGreaterThanOrEqual(0);
    expect(messages.indexOf('database ready')).toBeLessThan(messages.indexOf('netwarden listening'));
    expect(serve.stderr()).not.toContain('Netwarden is ready');
    // Every other line of standard output is still a JSON log line.
    const stdoutOnly = out.split('\n').filter((line) => line.trim() && !serve.stderr().includes(line) && line !== ready[0]);
    for (const line of stdoutOnly) expect(() => JSON.parse(line), line).not.toThrow();
  });
});
