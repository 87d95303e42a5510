/**
 * One pass over an nmap XML report that checks it is well-formed and builds, element by element,
 * the very values fast-xml-parser gives with the options of core/nmap-xml.ts (attributes unprefixed
 * and never parsed, text trimmed and never parsed, the five XML entities decoded, numeric character
 * references left as written, the elements of ARRAY_ELEMENTS always arrays). Each <host> child of
 * <nmaprun> is handed over the moment it ends and dropped, so no tree of the whole report is built.
 * Pure.
 *
 * It reads a strict subset of XML, the one nmap writes: ASCII names, quoted attributes, nothing in
 * <nmaprun> but elements and text (no comment, CDATA section or processing instruction inside it),
 * references only to the five XML entities and to characters XML allows, a prolog of the XML
 * declaration, nmap's <!DOCTYPE nmaprun>, processing instructions and comments. Every document it
 * reads, fast-xml-parser's validator accepts and its parser gives the same values for; anything
 * else (anything it cannot tell for sure) makes it give up and return false, and the caller reads
 * the document the slower way (validator, then parser), which names the problem exactly.
 * The report must have passed core/nmap-import.ts checkReportSafety first.
 */

type Node = Record<string, unknown>;

/** What reading a report gave: the <nmaprun> element without its <host> children, or false (read it the slow way). */
export type ReportRead = { run: Node } | false;

/** Names fast-xml-parser refuses or renames (prototype pollution guards): left to it. */
const RESERVED_NAMES = new Set([
  '__proto__',
  'constructor',
  'prototype',
  'hasOwnProperty',
  'toString',
  'valueOf',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
]);

/** Attributes of the processing instructions read here (the parser reads them as attributes too). */
const PI_ATTRIBUTES = new Set(['version', 'encoding', 'standalone', 'href', 'type', 'media', 'charset', 'title', 'alternate']);

/**
 * Names nmap writes, kept as constants: a name read is looked up here by its first character and
 * length before it is cut from the text (fewer strings made, and keys V8 already knows).
 */
const KNOWN_NAMES = (
  'nmaprun scaninfo verbose debugging hosthint host status address hostnames hostname ports port extraports ' +
  'extrareasons state service cpe script elem table os portused osmatch osclass uptime distance tcpsequence ' +
  'ipidsequence tcptssequence trace hop times runstats finished hosts taskbegin taskend taskprogress smurf ' +
  'hostscript prescript postscript output target ' +
  'scanner args start startstr version xmloutputversion type protocol numservices services level state reason ' +
  'reason_ttl addr addrtype vendor name portid product extrainfo method conf tunnel ostype devicefamily servicefp ' +
  'id key accuracy line osfamily osgen proto seconds lastboot value index difficulty values ttl ipaddr rtt srtt ' +
  'rttvar to time timestr summary elapsed exit errormsg up down total count endtime starttime task percent ' +
  'remaining etc extra hostname'
).split(' ');
const NAME_TABLE: (string[] | undefined)[] = [];
for (const name of new Set(KNOWN_NAMES)) (NAME_TABLE[name.charCodeAt(0) * 32 + name.length] ??= []).push(name);

/** The name from `start` to `end` of `xml`, as one of KNOWN_NAMES when it is one. */
function nameAt(xml: string, start: number, end: number): string {
  const length = end - start;
  if (length < 32) {
    const candidates = NAME_TABLE[xml.charCodeAt(start) * 32 + length];
    if (candidates !== undefined) for (let k = 0; k < candidates.length; k++) if (xml.startsWith(candidates[k], start)) return candidates[k];
  }
  return xml.slice(start, end);
}

/** Deeper than this, fast-xml-parser (at most 100 nested tags) is left to decide. */
const MAX_DEPTH = 64;

/** An element being read: its children as compressed so far, its text, its attributes. */
interface Frame {
  name: string;
  /** Its children as compressed so far; null until it has one. */
  obj: Node | null;
  keys: number;
  text: string | undefined;
  attrs: Node | null;
}

const hasOwn = (obj: object, key: string): boolean => Object.prototype.hasOwnProperty.call(obj, key);

/**
 * Reads `xml` (after checkReportSafety). `isArray` as the parser's option; `onHost` gets each
 * <host> child of <nmaprun> in document order, as the parser would have put it in `run.host`.
 */
export function readReportXml(xml: string, isArray: (name: string) => boolean, onHost: (host: unknown) => void): ReportRead {
  if (xml.includes('\r')) xml = xml.replace(/\r\n?/g, '\n');
  const len = xml.length;
  const begin = xml.charCodeAt(0) === 0xfeff ? 1 : 0;
  let i = begin;
  let run: Node | null = null;
  let runHosts = 0;
  let sawDoctype = false;

  // The prolog: white space, the XML declaration (first thing only), PIs, comments, <!DOCTYPE nmaprun>.
  for (;;) {
    i = skipSpace(xml, i);
    if (i >= len) return false;
    if (xml.charCodeAt(i) !== 0x3c) return false;
    const c1 = xml.charCodeAt(i + 1);
    if (c1 === 0x3f) {
      const end = readPI(xml, i, begin);
      if (end < 0) return false;
      i = end;
    } else if (c1 === 0x21) {
      if (xml.startsWith('<!--', i)) {
        const end = xml.indexOf('-->', i + 4);
        if (end < 0) return false;
        i = end + 3;
      } else if (!sawDoctype && xml.startsWith('<!DOCTYPE', i)) {
        const m = /^<!DOCTYPE[ \t\n]+nmaprun[ \t\n]*>/.exec(xml.slice(i, i + 64));
        if (m === null) return false;
        sawDoctype = true;
        i += m[0].length;
      } else return false;
    } else break;
  }

  // The root element and everything in it.
  const stack: Frame[] = [];
  // Where the next '&' is at or after the place read (Infinity: none left), so each value and text looks it up once.
  let nextAmp = -1;
  const ampFrom = (from: number) => {
    const at = xml.indexOf('&', from);
    return at < 0 ? Infinity : at;
  };
  for (;;) {
    // At a '<' (or the end).
    if (i >= len) return false;
    const c1 = xml.charCodeAt(i + 1);
    if (c1 === 0x2f) {
      // End tag: </name ws*>
      const frame = stack.pop();
      if (frame === undefined) return false;
      const nameEnd = i + 2 + frame.name.length;
      if (!xml.startsWith(frame.name, i + 2)) return false;
      // A longer name with this one as prefix (</hosts> for <host>) has neither space nor '>' here.
      let j = skipSpace(xml, nameEnd);
      if (xml.charCodeAt(j) !== 0x3e) return false;
      j++;
      if (stack.length === 0) {
        // <nmaprun>: its hosts count as the one key they would be in it.
        if (runHosts > 0) frame.keys++;
        const value = finish(frame, isArray);
        if (typeof value !== 'object') return false;
        run = value as Node;
        i = j;
        break;
      }
      const value = finish(frame, isArray);
      if (stack.length === 1 && frame.name === 'host') {
        runHosts++;
        onHost(value);
      } else add(stack[stack.length - 1], frame.name, value, isArray);
      i = j;
    } else {
      // Start tag: <name (ws+ name ws* = ws* "value")* ws* (/)?>
      if (!isNameStart(c1)) return false;
      let j = i + 2;
      while (j < len && isNameChar(xml.charCodeAt(j))) j++;
      const name = nameAt(xml, i + 1, j);
      if (RESERVED_NAMES.has(name)) return false;
      let attrs: Node | null = null;
      let selfClosing = false;
      for (;;) {
        const c = xml.charCodeAt(j);
        if (c === 0x3e) {
          j++;
          break;
        }
        if (c === 0x2f) {
          if (xml.charCodeAt(j + 1) !== 0x3e) return false;
          selfClosing = true;
          j += 2;
          break;
        }
        if (!isSpace(c)) return false;
        j = skipSpace(xml, j);
        const n = xml.charCodeAt(j);
        if (n === 0x3e || n === 0x2f) continue;
        if (!isNameStart(n)) return false;
        const nameStart = j;
        while (j < len && isNameChar(xml.charCodeAt(j))) j++;
        const attrName = nameAt(xml, nameStart, j);
        if (RESERVED_NAMES.has(attrName)) return false;
        j = skipSpace(xml, j);
        if (xml.charCodeAt(j) !== 0x3d) return false;
        j = skipSpace(xml, j + 1);
        const quote = xml.charCodeAt(j);
        if (quote !== 0x22 && quote !== 0x27) return false;
        const valueEnd = xml.indexOf(quote === 0x22 ? '"' : "'", j + 1);
        if (valueEnd < 0) return false;
        let value = xml.slice(j + 1, valueEnd);
        if (nextAmp < j) nextAmp = ampFrom(j);
        if (nextAmp < valueEnd) {
          const decoded = decodeEntities(value.trim());
          if (decoded === null) return false;
          value = decoded;
        } else value = value.trim();
        attrs ??= {};
        if (hasOwn(attrs, attrName)) return false;
        attrs[attrName] = value;
        j = valueEnd + 1;
        // After a value: white space, '>' or '/>' (checked at the top of the loop).
        const after = xml.charCodeAt(j);
        if (!isSpace(after) && after !== 0x3e && after !== 0x2f) return false;
      }
      if (stack.length === 0) {
        // The root: nmap's, without an attribute named host (it would replace the hosts).
        if (name !== 'nmaprun' || (attrs !== null && hasOwn(attrs, 'host'))) return false;
      }
      if (stack.length >= MAX_DEPTH) return false;
      if (selfClosing) {
        if (stack.length === 0) return false;
        // An empty element: its attributes, or ''.
        const value = attrs === null ? '' : arrayAttributes(attrs, isArray);
        if (stack.length === 1 && name === 'host') {
          runHosts++;
          onHost(value);
        } else add(stack[stack.length - 1], name, value, isArray);
      } else stack.push({ name, obj: null, keys: 0, text: undefined, attrs });
      i = j;
    }
    // Text up to the next tag.
    const lt = xml.indexOf('<', i);
    if (lt < 0) return false;
    if (lt > i) {
      const raw = xml.slice(i, lt);
      const trimmed = raw.trim();
      if (trimmed !== '') {
        let text: string | null = trimmed;
        if (nextAmp < i) nextAmp = ampFrom(i);
        if (nextAmp < lt) text = decodeEntities(trimmed);
        if (text === null) return false;
        // The validator refuses '&' outside a reference (checked by decodeEntities) and nothing else here.
        const frame = stack[stack.length - 1];
        frame.text = frame.text === undefined ? text : frame.text + text;
      }
    }
    i = lt;
    const c = xml.charCodeAt(i + 1);
    // Inside the root only elements and text: comments, CDATA, PIs and declarations are left to the parser.
    if (c === 0x21 || c === 0x3f) return false;
  }

  // The epilog: white space and comments.
  for (;;) {
    i = skipSpace(xml, i);
    if (i >= len) break;
    if (!xml.startsWith('<!--', i)) return false;
    const end = xml.indexOf('-->', i + 4);
    if (end < 0) return false;
    i = end + 3;
  }
  return run === null ? false : { run };
}

/** Adds a child's value to its parent as the parser's compress step does. */
function add(parent: Frame, name: string, value: unknown, isArray: (name: string) => boolean): void {
  const obj = (parent.obj ??= {});
  const existing = obj[name];
  if (existing !== undefined && hasOwn(obj, name)) {
    if (Array.isArray(existing)) existing.push(value);
    else obj[name] = [existing, value];
  } else {
    obj[name] = isArray(name) ? [value] : value;
    parent.keys++;
  }
}

/** An element's value as the parser gives it: attributes over children, a lone text as a string, nothing as ''. */
function finish(frame: Frame, isArray: (name: string) => boolean): unknown {
  const attrs = frame.attrs;
  const hasText = frame.text !== undefined && frame.text.length > 0;
  if (frame.obj === null && attrs !== null) {
    // Attributes alone (with the text): they make the value.
    return hasText ? { '#text': frame.text, ...arrayAttributes(attrs, isArray) } : arrayAttributes(attrs, isArray);
  }
  const obj = frame.obj ?? {};
  let keys = frame.keys;
  if (hasText) {
    obj['#text'] = frame.text;
    keys++;
  }
  if (attrs !== null) {
    for (const name in attrs) obj[name] = isArray(name) ? [attrs[name]] : attrs[name];
    return obj;
  }
  if (keys === 1 && frame.text !== undefined && frame.text.length > 0) return frame.text;
  if (keys === 0) return '';
  return obj;
}

/** Attributes as an element's value: those named as arrays in an array of their own. */
function arrayAttributes(attrs: Node, isArray: (name: string) => boolean): Node {
  for (const name in attrs) if (isArray(name)) attrs[name] = [attrs[name]];
  return attrs;
}

/**
 * A processing instruction at `at` in the prolog: the end after its `?>`, or -1 when the
 * validator or the parser could see it otherwise (the XML declaration anywhere but first, a
 * quote inside, an attribute the parser could treat specially).
 */
function readPI(xml: string, at: number, begin: number): number {
  const end = xml.indexOf('?>', at + 2);
  if (end < 0) return -1;
  const body = xml.slice(at + 2, end);
  const m = /^([A-Za-z][A-Za-z0-9_.-]*)((?:[ \t\n]+[a-z]+[ \t\n]*=[ \t\n]*"[^"'<&]*")*)[ \t\n]*$/.exec(body);
  if (m === null) return -1;
  if (m[1].toLowerCase() === 'xml' && (at !== begin || m[1] !== 'xml')) return -1;
  for (const attr of m[2].matchAll(/([a-z]+)[ \t\n]*=/g)) if (!PI_ATTRIBUTES.has(attr[1])) return -1;
  return end + 2;
}

/**
 * Text with its references to the five XML entities decoded and numeric character references
 * left as written (the parser's way); null for any other '&' (another entity, a reference to a
 * character XML does not allow, which the parser removes, or one the validator refuses).
 */
function decodeEntities(text: string): string | null {
  let out = '';
  let last = 0;
  for (let amp = text.indexOf('&'); amp >= 0; amp = text.indexOf('&', amp + 1)) {
    const semi = text.indexOf(';', amp + 1);
    if (semi < 0 || semi - amp > 12) return null;
    const ref = text.slice(amp + 1, semi);
    let ch: string;
    switch (ref) {
      case 'lt':
        ch = '<';
        break;
      case 'gt':
        ch = '>';
        break;
      case 'amp':
        ch = '&';
        break;
      case 'quot':
        ch = '"';
        break;
      case 'apos':
        ch = "'";
        break;
      default: {
        const m = /^#(?:([0-9]{1,7})|x([0-9a-fA-F]{1,6}))$/.exec(ref);
        if (m === null) return null;
        const cp = m[1] !== undefined ? Number(m[1]) : parseInt(m[2], 16);
        // Left as written by the parser: characters XML 1.0 allows (no NUL, C0 control but tab and line ends, surrogate).
        if (cp > 0x10ffff || (cp < 0x20 && cp !== 0x09 && cp !== 0x0a && cp !== 0x0d) || (cp >= 0xd800 && cp <= 0xdfff)) return null;
        continue;
      }
    }
    out += text.slice(last, amp) + ch;
    last = semi + 1;
  }
  return last === 0 ? text : out + text.slice(last);
}

function skipSpace(xml: string, i: number): number {
  for (;;) {
    const c = xml.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x09) i++;
    else return i;
  }
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x09;
}

/** [A-Za-z_:] */
function isNameStart(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || c === 0x3a;
}

/** [A-Za-z0-9_:.-] */
function isNameChar(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x5f || c === 0x3a || c === 0x2e || c === 0x2d;
}
