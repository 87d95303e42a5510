/**
 * Reads an nmap report for an import (core/nmap-import.ts planImport) without holding up the
 * process: a large report is read in a worker thread, so the instance keeps answering requests
 * and running scans while it parses (a 50 MiB report takes seconds). Small reports, and code not
 * compiled to JavaScript (the tests run the TypeScript sources), are read in this thread.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ReportRejectedError, planImport, type ImportPlan } from '../core/nmap-import.js';

/** Reports smaller than this are read here (about half a second at most): a thread would cost more than it saves. */
export const WORKER_THRESHOLD_BYTES = 2 * 1024 * 1024;

/**
 * What a thread runs: with `part` 'one-pass', planOnePass (the plan, or null for a report it does
 * not read); with 'plan', the reading without the well-formedness check (planWellFormed); with
 * 'check', the safety and well-formedness checks alone.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.module).then((m) => {
  try {
    const { part, xml } = workerData;
    if (part === 'check') {
      m.checkReportSafety(xml);
      m.checkWellFormed(xml);
      parentPort.postMessage({ plan: null });
    } else if (part === 'one-pass') parentPort.postMessage({ plan: m.planOnePass(xml) });
    else parentPort.postMessage({ plan: m.planWellFormed(xml) });
  } catch (err) {
    parentPort.postMessage({ error: { message: err.message, rejected: err instanceof m.ReportRejectedError } });
  }
}, (err) => parentPort.postMessage({ error: { message: String(err && err.message), rejected: false } }));
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
 */
export async function readNmapReport(xml: string, threshold = WORKER_THRESHOLD_BYTES): Promise<ImportPlan> {
  const compiled = compiledModule();
  if (xml.length < threshold || compiled === null) return planImport(xml);
  const onePass = await inThread(compiled, xml, 'one-pass');
  if (onePass !== null) return onePass;
  const check = inThread(compiled, xml, 'check');
  const plan = inThread(compiled, xml, 'plan');
  // The reader's failure waits for the checker's verdict: refusing as malformed comes first.
  plan.catch(() => {});
  await check;
  return (await plan)!;
}

function inThread(compiled: URL, xml: string, part: 'one-pass' | 'check' | 'plan'): Promise<ImportPlan | null> {
  return new Promise<ImportPlan | null>((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { module: compiled.href, xml, part } });
    let settled = false;
    worker.once('message', (message: { plan?: ImportPlan | null; error?: { message: string; rejected: boolean } }) => {
      settled = true;
      if (message.error === undefined) resolve(message.plan ?? null);
      else if (message.error.rejected) reject(new ReportRejectedError(message.error.message));
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
}
