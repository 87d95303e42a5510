/**
 * V8's young generation while `netwarden serve` starts. Start-up allocates a lot that lives on
 * (modules, schemas, compiled routes), so V8 keeps doubling the semi-spaces, to 2 × 16 MB, and
 * keeps them once the service idles: about 25 MB of its idle memory. bin/netwarden.js holds the
 * growth for `serve` before anything loads; the server lets it grow again as usual once it
 * listens, so under load the young generation sizes itself as with Node's defaults. A person who
 * set a semi-space option of their own (NODE_OPTIONS, docs/configuration.md) keeps it untouched.
 *
 * Only `--semi-space-growth-factor` is changed at run time: V8 reads it each time it considers
 * growing the semi-spaces, so changing it between collections is safe (the semi-space size flags
 * are read once, when the heap is set up, and cannot be changed this way).
 */
import v8 from 'node:v8';

/** V8's default growth factor (Node 20's V8 and later). */
const DEFAULT_GROWTH_FACTOR = 2;

let held = false;

/** Whether `options` (NODE_OPTIONS and the process's own flags) already say how big the semi-spaces may be. */
export function setsSemiSpace(options: string): boolean {
  return /--(?:max-|min-)?semi[-_]space/.test(options);
}

/** Keeps the young generation at its initial size (bin/netwarden.js, before `serve` loads anything). */
export function holdYoungGeneration(options: string): void {
  if (held || setsSemiSpace(options)) return;
  v8.setFlagsFromString('--semi-space-growth-factor=1');
  held = true;
}

/** Lets the young generation grow again as with Node's defaults (the server, once it listens). */
export function releaseYoungGeneration(): void {
  if (!held) return;
  held = false;
  v8.setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_GROWTH_FACTOR}`);
}
