/**
 * Literal pre-filters for the fingerprint table's patterns (`fingerprints.ts`): text that any match
 * of a pattern must contain, read once from the pattern's source, so that matching a host's values
 * against some two hundred patterns runs only the few regular expressions that can match (a
 * substring test costs a fraction of a regular expression that fails; profiled on 10,000 hosts).
 *
 * The filter is conservative: it may let through a value the pattern does not match (the pattern
 * then decides), never hold back one it matches. A pattern whose source it cannot read for sure
 * (flags other than `i`, escapes it does not know, a `{` that is no quantifier) gets no filter.
 */

/** One literal of a filter: the value must contain it (at its start, `start`). */
export interface RequiredLiteral {
  text: string;
  start: boolean;
}

/**
 * What a value must contain for `pattern` to match it: one of `literals` (lower case when `lowerCase`:
 * then tested against the value in lower case), or null when the pattern promises no literal.
 */
export interface LiteralFilter {
  lowerCase: boolean;
  literals: readonly RequiredLiteral[];
}

/** Escaped characters that stand for themselves. */
const isPunctuation = (c: string) => /^[^A-Za-z0-9_]$/.test(c);
/** Escapes of a class or an assertion (`\d`, `\b`…): no literal, no payload to skip. */
const CLASS_ESCAPES = 'dDwWsSbB';
/** Shortest literal worth a test when the pattern is not anchored. */
const MIN_FLOATING = 3;

/** The index just after the group or class that opens at `i` (`(` or `[`); -1 if unbalanced. */
function skipGroup(source: string, i: number): number {
  let depth = 0;
  let inClass = false;
  for (let j = i; j < source.length; j++) {
    const c = source[j];
    if (c === '\\') {
      j++;
      continue;
    }
    if (inClass) {
      if (c === ']') {
        inClass = false;
        if (source[i] === '[') return j + 1;
      }
      continue;
    }
    if (c === '[') {
      inClass = true;
      continue;
    }
    if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return j + 1;
  }
  return -1;
}

/** The top-level alternatives of a source; null if it is unbalanced. */
function alternatives(source: string): string[] | null {
  const out: string[] = [];
  let from = 0;
  for (let i = 0; i < source.length;) {
    const c = source[i];
    if (c === '\\') i += 2;
    else if (c === '(' || c === '[') {
      const end = skipGroup(source, i);
      if (end < 0) return null;
      i = end;
    } else if (c === '|') {
      out.push(source.slice(from, i));
      from = ++i;
    } else i++;
  }
  out.push(source.slice(from));
  return out;
}

/** A quantifier at `i`: its minimum and where it ends (a lazy `?` included); null if there is none. */
function quantifierAt(source: string, i: number): { min: number; end: number } | null | 'unknown' {
  const c = source[i];
  let min: number;
  let end: number;
  if (c === '?' || c === '*') {
    min = 0;
    end = i + 1;
  } else if (c === '+') {
    min = 1;
    end = i + 1;
  } else if (c === '{') {
    const m = /^\{(\d+)(?:,\d*)?\}/.exec(source.slice(i));
    // A `{` that is no quantifier is a literal brace outside Unicode mode: not worth reading for sure.
    if (!m) return 'unknown';
    min = Number(m[1]);
    end = i + m[0].length;
  } else return null;
  if (source[end] === '?') end++;
  return { min, end };
}

/** The literal runs of one alternative that every match contains; null if the source cannot be read for sure. */
function runsOf(alt: string): RequiredLiteral[] | null {
  const runs: RequiredLiteral[] = [];
  let run = '';
  let runAtStart = false;
  const end = () => {
    if (run) runs.push({ text: run, start: runAtStart });
    run = '';
    runAtStart = false;
  };
  let i = 0;
  if (alt[0] === '^') {
    i = 1;
    runAtStart = true;
  }
  while (i < alt.length) {
    const c = alt[i];
    let literal: string | null = null;
    let next: number;
    if (c === '\\') {
      const e = alt[i + 1];
      if (e === undefined) return null;
      if (isPunctuation(e)) literal = e;
      else if (!CLASS_ESCAPES.includes(e)) return null;
      next = i + 2;
    } else if (c === '(' || c === '[') {
      next = skipGroup(alt, i);
      if (next < 0) return null;
    } else if (c === '.' || c === '^' || c === '$') {
      next = i + 1;
    } else if (c === ')' || c === ']' || c === '}' || c === '|' || c === '?' || c === '*' || c === '+' || c === '{') {
      // Out of place here: not read for sure.
      return null;
    } else {
      literal = c;
      next = i + 1;
    }
    const q = quantifierAt(alt, next);
    if (q === 'unknown') return null;
    if (literal !== null && literal.charCodeAt(0) < 0x80) {
      if (q && q.min === 0) {
        end();
      } else {
        // Counted once at least: part of the run, which ends after it if it repeats.
        if (!run && runs.length > 0) runAtStart = false;
        run += literal;
        if (q) end();
      }
    } else {
      end();
    }
    // After the first atom, a run starts at the beginning only if nothing came before it.
    if (!run) runAtStart = false;
    i = q ? q.end : next;
  }
  end();
  return runs;
}

/** The filter of `pattern`, or null when it has none (see the module's comment). */
export function literalFilterOf(pattern: RegExp): LiteralFilter | null {
  if (pattern.flags !== '' && pattern.flags !== 'i') return null;
  const lowerCase = pattern.flags === 'i';
  const alts = alternatives(pattern.source);
  if (!alts) return null;
  const literals: RequiredLiteral[] = [];
  for (const alt of alts) {
    const runs = runsOf(alt);
    if (!runs) return null;
    const anchored = runs.find((r) => r.start);
    const longest = runs.reduce<RequiredLiteral | null>((best, r) => (!best || r.text.length > best.text.length ? r : best), null);
    let pick: RequiredLiteral | null = null;
    if (anchored && (anchored.text.length >= 2 || !longest || longest.text.length < MIN_FLOATING)) pick = anchored;
    else if (longest && longest.text.length >= MIN_FLOATING) pick = longest;
    // An alternative without a literal: the pattern may match anything.
    if (!pick) return null;
    literals.push({ text: lowerCase ? pick.text.toLowerCase() : pick.text, start: pick.start });
  }
  return { lowerCase, literals };
}

/** Whether `value` (already in lower case when the filter says so) may match: it contains one of the literals. */
export function mayMatch(filter: LiteralFilter, value: string): boolean {
  for (const l of filter.literals) if (l.start ? value.startsWith(l.text) : value.includes(l.text)) return true;
  return false;
}
