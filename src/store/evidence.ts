/**
 * How a device's recognition evidence is stored (migration 032): one `device_evidence` row per
 * recognition of the device, its hits in `evidence` as one JSON text, an array of
 * `[field, value, source, detail, confidence]` in the order recognition gave them, and when they
 * were last read in `observed_at` (every hit of one recognition is read at the same time). A device
 * has one such row, or none; a merge moves the merged device's rows to the kept device as they
 * are (each keeping its own time) until the next recognition of the device replaces them, and an
 * undo moves them back. The device's evidence is its rows' hits in the order of the rows' ids.
 *
 * A recognition of 10,000 devices writes (or, read again as stored, dates) 8,900 rows here,
 * where one row per hit was 102,000 (profiled: inserting them about 0.29 → 0.07 s of CPU of a first
 * scan's recording, dating them 0.08 → 0.04 s of a rescan's).
 */
import { hash } from 'node:crypto';

/** One hit of a device's recognition as stored: what `GET /api/devices/{id}/identity` lists, without its time. */
export interface EvidenceItem {
  field: string;
  value: string;
  source: string;
  detail: string;
  confidence: number;
}

type Stored = [field: string, value: string, source: string, detail: string, confidence: number];

/** The stored text of a recognition's evidence (confidence rounded); null for none (no row is stored). */
export function evidenceText(evidence: readonly EvidenceItem[]): string | null {
  if (evidence.length === 0) return null;
  return JSON.stringify(evidence.map((e): Stored => [e.field, e.value, e.source, e.detail, Math.round(e.confidence)]));
}

/**
 * The digest of a device's evidence (devices.evidence_digest, migration 025): sha256 of each hit's
 * compared columns (field, value, source, detail, rounded confidence) in turn as `<length>:<text>`,
 * so two different lists never pack alike (each text says where it ends); base64. Empty: null.
 * Compared with the digest of what a scan read, it tells whether the stored evidence changed
 * without reading it. (Of the hits, not of the stored text: cheaper to compute for every device of
 * a rescan, where few texts are written, and unchanged by migration 032.)
 */
export function evidenceDigest(evidence: readonly EvidenceItem[]): string | null {
  if (evidence.length === 0) return null;
  let out = '';
  for (const e of evidence) {
    for (const v of [e.field, e.value, e.source, e.detail, String(Math.round(e.confidence))]) out += `${v.length}:${v}`;
  }
  // One-shot: no Hash object per device (10,000 of them per scan; same digest as createHash's).
  return hash('sha256', out, 'base64');
}

/** The hits of a stored text, in order (a text that is not such an array: none). */
export function evidenceItems(text: string): EvidenceItem[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  const out: EvidenceItem[] = [];
  for (const item of parsed as unknown[]) {
    if (!Array.isArray(item)) continue;
    const [field, value, source, detail, confidence] = item as unknown[];
    out.push({ field: String(field), value: String(value), source: String(source), detail: String(detail), confidence: Number(confidence) });
  }
  return out;
}

/** A JSON string as evidenceText writes it (JSON.stringify: no space anywhere), and a number. */
const JSON_STRING = String.raw`"(?:[^"\\]|\\.)*"`;
const JSON_NUMBER = String.raw`-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?`;
const itemPatterns = new Map<string, RegExp>();

/**
 * The hits of one field in a stored text, in order: as evidenceItems(text) filtered by field, without
 * parsing the rest (the evaluation reads every device's CPEs; parsing every text cost it about
 * 0.03 s of CPU per 10,000 devices, measured). The field's name, quoted as JSON, appears unescaped
 * only as a whole string of the text; each item of the field starts `["<field>",`: when the items
 * read so account for every such string, none was missed, and otherwise (a value that is the
 * field's name, or a text written otherwise) the text is parsed whole.
 */
export function evidenceOfField(text: string, field: string): EvidenceItem[] {
  const quoted = JSON.stringify(field);
  const head = `[${quoted},`;
  let at = text.indexOf(quoted);
  if (at === -1) return [];
  let pattern = itemPatterns.get(field);
  if (!pattern) {
    const escaped = head.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    pattern = new RegExp(`${escaped}(${JSON_STRING}),(${JSON_STRING}),(${JSON_STRING}),(${JSON_NUMBER})\\]`, 'y');
    itemPatterns.set(field, pattern);
  }
  const out: EvidenceItem[] = [];
  let quotes = 0;
  for (; at !== -1; at = text.indexOf(quoted, at + quoted.length)) {
    quotes++;
    if (text[at - 1] !== '[') continue;
    pattern.lastIndex = at - 1;
    const m = pattern.exec(text);
    if (!m) continue;
    out.push({
      field,
      value: JSON.parse(m[1]) as string,
      source: JSON.parse(m[2]) as string,
      detail: JSON.parse(m[3]) as string,
      confidence: Number(m[4]),
    });
  }
  return out.length === quotes ? out : evidenceItems(text).filter((e) => e.field === field);
}

/**
 * A prefilter for SQL `like`: only rows whose text holds this can have a hit of `field` (the
 * field's name as JSON quotes it). Rows found are still read item by item.
 */
export const fieldPattern = (field: string): string => `%${JSON.stringify(field)}%`;
