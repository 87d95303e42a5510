/**
 * JSON.parse for large texts that gives the event loop back as it goes. One JSON.parse of a
 * 100 MiB agent upload holds the process for one to two seconds, during which nothing else is
 * answered (not even /health). Here the text is split along its containers: an object or array
 * larger than `leafChars` is taken apart at its top-level commas, and only pieces below that size
 * go to JSON.parse; between pieces the event loop runs. The result is what JSON.parse gives
 * (`__proto__` stays an ordinary own property, the last of duplicate keys wins), and malformed
 * text throws a SyntaxError.
 */

export interface ParseJsonOptions {
  /** Containers up to this many characters are parsed in one JSON.parse call. */
  leafChars?: number;
  /** Characters scanned or parsed between two turns of the event loop. */
  turnChars?: number;
}

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const COLON = 58;

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

export async function parseJsonYielding(text: string, options: ParseJsonOptions = {}): Promise<unknown> {
  const leafChars = options.leafChars ?? 256 * 1024;
  const turnChars = options.turnChars ?? 1024 * 1024;
  let sinceTurn = 0;
  const spent = async (chars: number) => {
    sinceTurn += chars;
    if (sinceTurn >= turnChars) {
      sinceTurn = 0;
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const malformed = (at: number) => new SyntaxError(`Unexpected token in JSON at position ${at}`);

  /** The index of the quote closing the string opened at `open`. */
  const stringEnd = (open: number, end: number): number => {
    let i = open;
    for (;;) {
      i = text.indexOf('"', i + 1);
      if (i < 0 || i >= end) throw malformed(open);
      let slashes = 0;
      for (let j = i - 1; text.charCodeAt(j) === BACKSLASH; j--) slashes++;
      if (slashes % 2 === 0) return i;
    }
  };

  /** The [start, end) ranges of the top-level members of the container body [a, b). */
  const members = async (a: number, b: number): Promise<[number, number][]> => {
    const parts: [number, number][] = [];
    let start = a;
    let depth = 0;
    let scanned = a;
    for (let i = a; i < b; i++) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) i = stringEnd(i, b);
      else if (c === 123 || c === 91) depth++;
      else if (c === 125 || c === 93) {
        if (--depth < 0) throw malformed(i);
      } else if (c === COMMA && depth === 0) {
        parts.push([start, i]);
        start = i + 1;
      }
      if (i - scanned >= turnChars) {
        await spent(i - scanned);
        scanned = i;
      }
    }
    await spent(b - scanned);
    if (depth !== 0) throw malformed(b);
    let rest = start;
    while (rest < b && isSpace(text.charCodeAt(rest))) rest++;
    if (rest < b || parts.length > 0) parts.push([start, b]);
    return parts;
  };

  const value = async (a: number, b: number): Promise<unknown> => {
    while (a < b && isSpace(text.charCodeAt(a))) a++;
    while (b > a && isSpace(text.charCodeAt(b - 1))) b--;
    const open = text.charCodeAt(a);
    const close = text.charCodeAt(b - 1);
    if (b - a <= leafChars || !((open === 91 && close === 93) || (open === 123 && close === 125))) {
      await spent(b - a);
      return JSON.parse(text.slice(a, b));
    }
    const parts = await members(a + 1, b - 1);
    if (open === 91) {
      // Consecutive small members are parsed together, as one array of up to leafChars.
      const out: unknown[] = [];
      let run: [number, number] | null = null;
      const flush = async () => {
        if (run === null) return;
        await spent(run[1] - run[0]);
        for (const item of JSON.parse(`[${text.slice(run[0], run[1])}]`) as unknown[]) out.push(item);
        run = null;
      };
      for (const [s, e] of parts) {
        if (e - s > leafChars) {
          await flush();
          out.push(await value(s, e));
        } else if (run !== null && e - run[0] <= leafChars) run[1] = e;
        else {
          await flush();
          run = [s, e];
        }
      }
      await flush();
      return out;
    }
    const out: Record<string, unknown> = {};
    for (const [s, e] of parts) {
      let k = s;
      while (k < e && isSpace(text.charCodeAt(k))) k++;
      if (text.charCodeAt(k) !== QUOTE) throw malformed(k);
      const keyEnd = stringEnd(k, e);
      let colon = keyEnd + 1;
      while (colon < e && isSpace(text.charCodeAt(colon))) colon++;
      if (text.charCodeAt(colon) !== COLON) throw malformed(colon);
      const key = JSON.parse(text.slice(k, keyEnd + 1)) as string;
      // As JSON.parse does: an own property, even for `__proto__`.
      Object.defineProperty(out, key, { value: await value(colon + 1, e), enumerable: true, writable: true, configurable: true });
    }
    return out;
  };

  return value(0, text.length);
}
