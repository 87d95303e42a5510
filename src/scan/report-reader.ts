/**
 * Reads an nmap report for an import (core/nmap-import.ts planImport) without holding up the
 * process: a large report is read in a worker thread, so the instance keeps answering requests
 * and running scans while it parses (a 50 MiB report takes seconds). Small reports, and code not
 * compiled to JavaScript (the tests run the TypeScript sources), are read in this thread.
 *
 * A report received as bytes (the HTTP body) goes to the thread as they are: its memory is
 * handed over, not copied, and decoded from UTF-8 there, so this thread neither decodes nor
 * copies the text of a large report.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ReportRejectedError, planImport, type ImportPlan } from '../core/nmap-import.js';

/** Reports smaller than this are read here (about half a second at most): a thread would cost more than it saves. */
export const WORKER_THRESHOLD_BYTES = 2 * 1024 * 1024;

/**
 * What a thread runs on `report` (a string, or the bytes of one as UTF-8, decoded as Fastify
 * decodes a text body): with `part` 'one-pass', planOnePass (the plan, or null for a report it
 * does not read, handing the bytes back for the next threads); with 'plan', the reading without
 * the well-formedness check (planWellFormed); with 'check', the safety and well-formedness checks alone.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const loaded = import(workerData.module);
const failed = (err) => parentPort.postMessage({ error: { message: String(err && err.message), rejected: false } });
// A thread started ahead (ReportThread) loads the module meanwhile and is given its work later.
if (workerData.part !== undefined) loaded.then((m) => run(m, workerData), failed);
else parentPort.once('message', (job) => loaded.then((m) => run(m, job), failed));
function run(m, { part, report }) {
  try {
    const xml = typeof report === 'string' ? report : Buffer.from(report).toString('utf8');
    if (part === 'check') {
      m.checkReportSafety(xml);
      m.checkWellFormed(xml);
      parentPort.postMessage({ plan: null });
    } else if (part === 'one-pass') {
      const plan = m.planOnePass(xml);
      if (plan === null && typeof report !== 'string') parentPort.postMessage({ plan, report }, [report]);
      else parentPort.postMessage(answer(plan));
    } else parentPort.postMessage(answer(m.planWellFormed(xml)));
  } catch (err) {
    parentPort.postMessage({ error: { message: err.message, rejected: err instanceof m.ReportRejectedError } });
  }
}
function answer(plan) {
  return plan === null ? { plan } : { plan: { ...plan, hosts: null }, hosts: JSON.stringify(plan.hosts) };
}
`;

/** The compiled core module a thread can load, or null when this code runs from the TypeScript sources. */
function compiledModule(): URL | null {
  const url = new URL('../core/nmap-import.js', import.meta.url);
  return url.protocol === 'file:' && existsSync(fileURLToPath(url)) ? url : null;
}

/**
 * The import plan of a report: what planImport gives (or its ReportRejectedError), read in a
 * worker thread when the report is at least `threshold` bytes and the compiled module is there.
 * A report nmap wrote is checked and read in one pass (planOnePass) in one thread. Any other is
 * read by two threads at once: one checks that the document is well-formed, the other reads it
 * (after the same safety checks, so no document with a DTD reaches the parser); a document that
 * is not well-formed is refused with the checker's message, as planImport refuses it before
 * reading, and the reader's answer counts only once the checker passed it.
 *
 * `report` given as bytes (UTF-8) is read as the text Fastify would decode from them; their
 * memory may be handed to a thread (the caller must not use them afterwards). `started`, a
 * thread started ahead (ReportThread), does the one-pass reading (or is discarded when the
 * report is read here).
 */
export async function readNmapReport(
  report: string | Uint8Array,
  threshold = WORKER_THRESHOLD_BYTES,
  started: ReportThread | null = null,
): Promise<ImportPlan> {
  const compiled = compiledModule();
  const size = typeof report === 'string' ? report.length : report.byteLength;
  if (size < threshold || compiled === null) {
    started?.discard();
    return planImport(typeof report === 'string' ? report : decodeUtf8(report));
  }
  const first = typeof report === 'string' ? report : ownBuffer(report);
  const onePass = await (started !== null ? started.give(first, 'one-pass') : inThread(compiled, first, 'one-pass'));
  if (onePass.plan !== null) return onePass.plan;
  // Bytes handed to the one-pass thread came back with its answer.
  const text = onePass.report ?? (report as string);
  // The checker gets a copy of bytes, the reader the bytes themselves.
  const check = inThread(compiled, typeof text === 'string' ? text : text.slice(0), 'check');
  const plan = inThread(compiled, text, 'plan');
  // The reader's failure waits for the checker's verdict: refusing as malformed comes first.
  plan.catch(() => {});
  await check;
  return (await plan).plan!;
}

/** UTF-8 text as Fastify decodes a body (invalid sequences as U+FFFD, a byte order mark kept). */
function decodeUtf8(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/** An ArrayBuffer holding exactly `bytes`, to hand to a thread: their own when they fill it, else a copy. */
function ownBuffer(bytes: Uint8Array): ArrayBuffer {
  const { buffer } = bytes;
  if (buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength) return buffer;
  // (A Buffer's slice is a view into the same memory: copied through a new array.)
  return new Uint8Array(bytes).buffer;
}

/**
 * A thread's message: a plan's hosts (nearly all of it) come as JSON text, which this thread
 * parses in about half the time it takes to deserialize the same objects cloned (a 10,000-host
 * report: 13 MB of them). They are plain data: strings, numbers within bounds, null, arrays.
 */
interface ThreadMessage {
  plan?: ImportPlan | null;
  hosts?: string;
  report?: ArrayBuffer;
  error?: { message: string; rejected: boolean };
}

interface ThreadAnswer {
  plan: ImportPlan | null;
  /** The bytes a one-pass thread hands back with a null plan. */
  report?: ArrayBuffer;
}

function inThread(compiled: URL, report: string | ArrayBuffer, part: Part): Promise<ThreadAnswer> {
  return new ReaderThread(compiled, { report, part }).answer;
}

type Part = 'one-pass' | 'check' | 'plan';

/**
 * A thread reading (part of) a report: given its work when it starts, or later (give) once the
 * module is loaded ahead (ReportThread). `answer` settles with its message, or fails when it
 * stops without one (a thread discarded unused fails so, unobserved).
 */
class ReaderThread {
  readonly answer: Promise<ThreadAnswer>;
  private readonly worker: Worker;

  constructor(compiled: URL, job: { report: string | ArrayBuffer; part: Part } | null) {
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { module: compiled.href, ...job },
      transferList: job === null || typeof job.report === 'string' ? [] : [job.report],
    });
    const worker = this.worker;
    this.answer = new Promise<ThreadAnswer>((resolve, reject) => {
      let settled = false;
      worker.once('message', (message: ThreadMessage) => {
        settled = true;
        if (message.error === undefined) {
          const plan = message.plan ?? null;
          if (plan !== null && message.hosts !== undefined) plan.hosts = JSON.parse(message.hosts) as ImportPlan['hosts'];
          resolve({ plan, report: message.report });
        } else if (message.error.rejected) reject(new ReportRejectedError(message.error.message));
        else reject(new Error(`could not read the report: ${message.error.message ?? 'unknown error'}`));
        void worker.terminate();
      });
      worker.once('error', (err) => {
        if (!settled) reject(err);
        settled = true;
      });
      worker.once('exit', (code) => {
        if (!settled) reject(new Error(`the thread reading the report stopped (exit code ${code})`));
        settled = true;
      });
    });
    // Whoever reads the answer sees its failure; a thread discarded unused has no reader.
    this.answer.catch(() => {});
  }

  give(report: string | ArrayBuffer, part: Part): Promise<ThreadAnswer> {
    this.worker.postMessage({ report, part }, typeof report === 'string' ? [] : [report]);
    return this.answer;
  }

  discard(): void {
    void this.worker.terminate();
  }
}

/**
 * A thread started before the report is there: the HTTP route starts one when a large report's
 * body begins to arrive, so that loading the reader's code (tens of milliseconds, more on a busy
 * machine) overlaps receiving it. Given to readNmapReport, it reads the report in one pass;
 * discarded (a thread never given a report) when the request ends otherwise.
 */
export class ReportThread {
  private used = false;

  private constructor(private readonly thread: ReaderThread) {}

  /** A thread loading the reader, or null when this code runs from the TypeScript sources (no thread can load them). */
  static start(): ReportThread | null {
    const compiled = compiledModule();
    return compiled === null ? null : new ReportThread(new ReaderThread(compiled, null));
  }

  /** Gives the thread its report (once). */
  give(report: string | ArrayBuffer, part: Part): Promise<ThreadAnswer> {
    if (this.used) throw new Error('this thread was given a report already');
    this.used = true;
    return this.thread.give(report, part);
  }

  /** Ends the thread unless it is reading (a thread that answered has ended already). */
  discard(): void {
    if (!this.used) this.thread.discard();
    this.used = true;
  }
}
