/**
 * Reading an nmap report in a worker thread (src/scan/report-reader.ts), as the compiled service
 * does for reports of 2 MiB or more: the module is loaded from dist/ (built by the test set-up),
 * since a thread can only load compiled JavaScript.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planImport } from '../../src/core/nmap-import.js';
import * as sourceReader from '../../src/scan/report-reader.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'nmap-import');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');
const compiled = (await import(new URL('../../dist/scan/report-reader.js', import.meta.url).href)) as typeof sourceReader;

describe('readNmapReport', () => {
  it('gives in a thread exactly the plan planImport gives here', async () => {
    for (const name of ['loopback-sv-1.xml', 'lab-sv.xml', 'loopback-a.xml', 'mixed-ipv6.xml']) {
      expect(await compiled.readNmapReport(fixture(name), 0), name).toStrictEqual(planImport(fixture(name)));
    }
  });

  it('reads and refuses as planImport does, in one pass or in two threads (a comment among the hosts)', async () => {
    const base = fixture('loopback-sv-1.xml');
    const commented = base.replace('<runstats>', '<!-- hosts end here --><runstats>');
    const outOfBounds = base.replace(
      '<runstats>',
      '<host><status state="up"/><address addr="10.0.0.01" addrtype="ipv4"/></host><!-- x --><runstats>',
    );
    for (const xml of [commented, outOfBounds]) {
      const expected = await Promise.resolve()
        .then(() => planImport(xml))
        .then(
          (plan) => ({ plan }),
          (err: Error) => ({ error: `${err.name}: ${err.message}` }),
        );
      const got = await compiled.readNmapReport(xml, 0).then(
        (plan) => ({ plan }),
        (err: Error) => ({ error: `${err.name}: ${err.message}` }),
      );
      expect(got).toEqual(expected);
    }
  });

  it('refuses in a thread as planImport does, with a ReportRejectedError and the same message', async () => {
    const cut = fixture('loopback-sv-1.xml').slice(0, 1500);
    const dtd = fixture('loopback-sn.xml').replace('<!DOCTYPE nmaprun>', '<!DOCTYPE nmaprun [<!ENTITY x SYSTEM "file:///etc/passwd">]>');
    for (const xml of [cut, dtd, '<html/>']) {
      let expected = '';
      try {
        planImport(xml);
      } catch (err) {
        expected = (err as Error).message;
      }
      const err = await compiled.readNmapReport(xml, 0).then(
        () => null,
        (e: Error) => e,
      );
      expect(err?.name).toBe('ReportRejectedError');
      expect(err?.message).toBe(expected);
    }
  });

  it('leaves this thread free while a large report is read', async () => {
    const base = fixture('loopback-sv-1.xml');
    const hosts = base.slice(base.indexOf('<host '), base.indexOf('<runstats>'));
    // About 5 MiB: the same four hosts many times (one device each in the plan).
    const large = base.replace('<runstats>', `${hosts.repeat(Math.ceil((5 * 1024 * 1024) / hosts.length))}<runstats>`);
    let turns = 0;
    const timer = setInterval(() => turns++, 0);
    // Timer turns counted until the plan is there: none if the report were read in this thread
    // (the promise would settle before any timer could fire).
    const plan = await compiled.readNmapReport(large).then((p) => ({ ...p, turnsWhileReading: turns }));
    clearInterval(timer);
    expect(plan.turnsWhileReading).toBeGreaterThan(0);
    // The same report read here, synchronously: no turn in between.
    const here = { turns: 0 };
    const hereTimer = setInterval(() => here.turns++, 0);
    const inline = await sourceReader.readNmapReport(large).then(() => here.turns);
    clearInterval(hereTimer);
    expect(inline).toBe(0);
    expect(plan.hosts.map((h) => h.ip)).toEqual(['127.0.0.20', '127.0.0.21', '127.0.0.22', '127.0.0.23']);
  });

  it("reads a report's bytes as the text they decode to, handing them to the thread (in one pass, in two threads, refused)", async () => {
    const base = fixture('loopback-sv-1.xml');
    // A byte order mark and a hostname beyond ASCII: decoded as Fastify decodes a text body.
    const accented = `\ufeff${base.replace('<runstats>', '<!-- café --><runstats>')}`;
    const cut = base.slice(0, 1500);
    for (const xml of [base, accented, cut, '<html/>']) {
      const expected = await Promise.resolve()
        .then(() => planImport(xml))
        .then(
          (plan) => ({ plan }),
          (err: Error) => ({ error: `${err.name}: ${err.message}` }),
        );
      // The bytes alone in their memory (handed over: detached afterwards), and a view into a larger one (copied).
      const own = new Uint8Array(Buffer.from(xml, 'utf8'));
      const view = Buffer.from(`...${xml}...`, 'utf8').subarray(3, 3 + Buffer.byteLength(xml));
      for (const bytes of [own, view]) {
        const got = await compiled.readNmapReport(bytes, 0).then(
          (plan) => ({ plan }),
          (err: Error) => ({ error: `${err.name}: ${err.message}` }),
        );
        expect(got, xml.slice(0, 40)).toStrictEqual(expected);
      }
      expect(own.byteLength).toBe(0);
      // Read here below the threshold, from the sources too.
      const here = await sourceReader.readNmapReport(Buffer.from(xml, 'utf8')).then(
        (plan) => ({ plan }),
        (err: Error) => ({ error: `${err.name}: ${err.message}` }),
      );
      expect(here).toEqual(expected);
    }
  }, 120_000);

  it('reads with a thread started before the report is there, in one pass or in two threads; an unused one is discarded', async () => {
    const base = fixture('loopback-sv-1.xml');
    for (const xml of [base, base.replace('<runstats>', '<!-- hosts end here --><runstats>'), base.slice(0, 1500)]) {
      const expected = await Promise.resolve()
        .then(() => planImport(xml))
        .then(
          (plan) => ({ plan }),
          (err: Error) => ({ error: `${err.name}: ${err.message}` }),
        );
      const thread = compiled.ReportThread.start();
      expect(thread).not.toBeNull();
      const got = await compiled.readNmapReport(new Uint8Array(Buffer.from(xml, 'utf8')), 0, thread).then(
        (plan) => ({ plan }),
        (err: Error) => ({ error: `${err.name}: ${err.message}` }),
      );
      expect(got).toStrictEqual(expected);
    }
    // Discarded unused, and below the threshold (the report read here): nothing left running.
    compiled.ReportThread.start()!.discard();
    expect(await compiled.readNmapReport(Buffer.from(base, 'utf8'), undefined, compiled.ReportThread.start())).toStrictEqual(planImport(base));
    expect(sourceReader.ReportThread.start()).toBeNull();
  });

  it('reads small reports and the TypeScript sources in this thread', async () => {
    expect(await sourceReader.readNmapReport(fixture('loopback-sn.xml'), 0)).toEqual(planImport(fixture('loopback-sn.xml')));
    expect(sourceReader.WORKER_THRESHOLD_BYTES).toBe(2 * 1024 * 1024);
  });
});
