/**
 * The backup file format: gzip'd JSON lines, readable with `zcat | head`.
 *
 *   {"format":"netwarden-backup","format_version":1,"dialect":"sqlite","migrations":[…],"created_at":…,"version":…,"tables":[…]}
 *   {"table":"users","columns":["id","username",…],"sequence":3}     one per table, in `tables` order,
 *   [1,"admin",…]                                                     followed by its rows as arrays
 *   …
 *   {"end":true,"rows":{"users":1,…},"sha256":"…"}                    the last line: the file is complete
 *
 * `sha256` (format version 2 on) is the SHA-256 of every line before the last, newlines included,
 * exactly as written (uncompressed): a restore recomputes it and refuses a file whose content was
 * damaged or changed since. It detects damage and edits, not a forger (who can recompute it too):
 * keep backups where only administrators can write. Format 1 (older Netwarden) has no checksum;
 * a restore checks such a file's content row by row and says that its checksum could not be verified.
 *
 * Tables come parents first, so rows can be inserted in file order. Values are JSON null,
 * numbers, strings and booleans; the rare others are tagged objects (`{"base64":…}` for bytes,
 * `{"float":"Infinity"}`). The format says nothing about the dialect's types, so a backup of
 * SQLite restores into PostgreSQL and back.
 */
import type { Hash } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import { Readable, pipeline, type Writable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { NetwardenError } from '../util/errors.js';

export const BACKUP_FORMAT = 'netwarden-backup';
export const BACKUP_FORMAT_VERSION = 2;
/** The first format version whose last line carries the checksum. */
export const CHECKSUM_FORMAT_VERSION = 2;
/** The file name extension of a backup. */
export const BACKUP_EXTENSION = 'jsonl.gz';

export const BackupHeader = Type.Object({
  format: Type.Literal(BACKUP_FORMAT),
  format_version: Type.Integer({ minimum: 1 }),
  dialect: Type.Union([Type.Literal('sqlite'), Type.Literal('postgres')]),
  /** Migrations applied to the database that was backed up, in order. */
  migrations: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
  created_at: Type.String({ minLength: 1 }),
  /** The Netwarden version that wrote the backup. */
  version: Type.String(),
  tables: Type.Array(Type.String({ minLength: 1 })),
});
export type BackupHeader = Static<typeof BackupHeader>;

export const TableHeader = Type.Object({
  table: Type.String({ minLength: 1 }),
  columns: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
  /** Last value handed out by the table's id counter (ids are never reused after a restore). */
  sequence: Type.Union([Type.Integer(), Type.Null()]),
});
export type TableHeader = Static<typeof TableHeader>;

export const Trailer = Type.Object({
  end: Type.Literal(true),
  /** Rows per table: a restore checks it read them all. */
  rows: Type.Record(Type.String(), Type.Integer({ minimum: 0 })),
  /** SHA-256 (hex) of every line before this one, newlines included (format version 2 on). */
  sha256: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
});
export type Trailer = Static<typeof Trailer>;

/** A backup file that cannot be restored: not a backup, damaged, incomplete or too new. */
export class BackupFileError extends NetwardenError {
  readonly code = 'NW_BACKUP_FILE_INVALID';
}

/** `netwarden-backup-20261122T024808Z.jsonl.gz` for a backup taken at that moment. */
export function backupFileName(createdAt: string, prefix = 'netwarden-backup'): string {
  const stamp = createdAt.replace(/\.\d+Z$/, 'Z').replace(/[-:]/g, '');
  return `${prefix}-${stamp}.${BACKUP_EXTENSION}`;
}

export type JsonValue = null | number | string | boolean | { base64: string } | { float: string };

/** A column value read from either store, as it goes into the file. */
export function encodeValue(value: unknown, where: () => string): JsonValue {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : { float: String(value) };
    default:
      if (value instanceof Uint8Array) return { base64: Buffer.from(value).toString('base64') };
      if (value instanceof Date) return value.toISOString();
      throw new Error(`${where()}: a value of type ${typeof value} cannot be written to a backup`);
  }
}

/** A value from the file as the target store binds it (SQLite has no booleans). */
export function decodeValue(value: unknown, toSqlite: boolean): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'number') return value;
  if (typeof value === 'boolean') return toSqlite ? (value ? 1 : 0) : value;
  if (typeof value === 'object' && !Array.isArray(value)) {
    const tagged = value as Record<string, unknown>;
    if (typeof tagged.base64 === 'string' && Object.keys(tagged).length === 1) return Buffer.from(tagged.base64, 'base64');
    if (typeof tagged.float === 'string' && Object.keys(tagged).length === 1) return Number(tagged.float);
  }
  throw new BackupFileError('holds a value the backup format does not define');
}

/** Checks `value` against `schema`, or says what is wrong with it. */
export function problemWith(schema: TSchema, value: unknown): string | null {
  const error = Value.Errors(schema, value).First();
  if (!error) return null;
  return `${error.path || 'the line'}: ${error.message}`;
}

/**
 * Writes lines to a stream in chunks, waiting when it is full, and failing when it is closed
 * (for instance by a client that stopped downloading). With a hash, every line written goes into
 * it until digest() is called.
 */
export class LineWriter {
  private buffer = '';
  constructor(
    private readonly out: Writable,
    private hash?: Hash,
    private readonly chunkSize = 64 * 1024,
  ) {}

  async line(value: unknown): Promise<void> {
    const text = `${JSON.stringify(value)}\n`;
    this.hash?.update(text, 'utf8');
    this.buffer += text;
    if (this.buffer.length >= this.chunkSize) await this.flush();
  }

  /** The hash of the lines written so far (hex); later lines are not hashed. */
  digest(): string {
    if (!this.hash) throw new Error('this writer hashes nothing');
    const hex = this.hash.digest('hex');
    this.hash = undefined;
    return hex;
  }

  async flush(): Promise<void> {
    const text = this.buffer;
    this.buffer = '';
    if (this.out.destroyed || this.out.writableEnded) throw new Error('the backup output was closed before the backup was complete');
    if (this.out.write(text)) return;
    await new Promise<void>((resolve, reject) => {
      const done = (err?: Error) => {
        this.out.off('drain', onDrain).off('close', onClose).off('error', done);
        if (err) reject(err);
        else resolve();
      };
      const onDrain = () => done();
      const onClose = () => done(new Error('the backup output was closed before the backup was complete'));
      this.out.on('drain', onDrain).on('close', onClose).on('error', done);
    });
  }
}

/** Longest line a restore accepts; the header has to be far shorter. */
const MAX_LINE = 256 * 1024 * 1024;
const MAX_HEADER_LINE = 1024 * 1024;
const GZIP_MAGIC = [0x1f, 0x8b];

/**
 * The lines of a backup: gzip'd as written, or already decompressed (`zcat`). Errors say what is
 * wrong with the file in words an operator can act on.
 */
export async function* backupLines(input: Readable): AsyncGenerator<{ text: string; number: number }> {
  const decoder = new StringDecoder('utf8');
  // The line being read, in pieces: only each new piece is searched for its end, and the pieces are
  // joined once, so a line of any length is read in time linear in its length (appending to one
  // string and searching all of it again per chunk made a 20 MB line take the square of that).
  let parts: string[] = [];
  let partsLength = 0;
  let number = 0;
  let sawData = false;

  // The first chunk decides whether the file is compressed; it is then put back in front.
  const chunks = input[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const first = await chunks.next();
  if (first.done || first.value.length === 0) throw new BackupFileError('is empty, not a Netwarden backup');
  const head: Buffer = first.value;
  const raw = Readable.from(
    (async function* () {
      yield head;
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
    })(),
  );
  const gzipped = head[0] === GZIP_MAGIC[0] && (head.length < 2 || head[1] === GZIP_MAGIC[1]);
  // pipeline() hands an error of either stream to whoever reads the last one.
  const source: Readable = gzipped ? pipeline(raw, createGunzip(), () => {}) : raw;
  const takeLine = (last: string): string => {
    const text = parts.length === 0 ? last : parts.join('') + last;
    parts = [];
    partsLength = 0;
    return text;
  };

  try {
    for await (const chunk of source) {
      sawData = true;
      const text = decoder.write(chunk as Buffer);
      let start = 0;
      for (let newline = text.indexOf('\n'); newline >= 0; newline = text.indexOf('\n', start)) {
        const line = takeLine(text.slice(start, newline));
        start = newline + 1;
        number++;
        yield { text: line, number };
      }
      if (start < text.length) {
        parts.push(text.slice(start));
        partsLength += text.length - start;
      }
      const limit = number === 0 ? MAX_HEADER_LINE : MAX_LINE;
      if (partsLength > limit) {
        throw new BackupFileError(
          number === 0 ? 'is not a Netwarden backup (no header line)' : `is damaged: line ${number + 1} is longer than ${MAX_LINE} bytes`,
        );
      }
    }
  } catch (err) {
    if (err instanceof BackupFileError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'Z_BUF_ERROR' || code === 'Z_DATA_ERROR' || code === 'ERR_ZLIB') {
      throw new BackupFileError(
        number === 0 && !sawData
          ? 'is not a Netwarden backup (not gzip data)'
          : `is damaged or incomplete: the compressed data ends or breaks after line ${number} (${(err as Error).message})`,
      );
    }
    throw err;
  }
  const rest = takeLine(decoder.end());
  if (rest.length) {
    number++;
    yield { text: rest, number };
  }
}

/** The header line of a backup, checked: a file that is not a backup or is too new is refused here. */
export function parseHeader(text: string | undefined): BackupHeader {
  let header: unknown;
  try {
    header = JSON.parse(text ?? '');
  } catch {
    throw new BackupFileError('is not a Netwarden backup (its first line is not JSON)');
  }
  const fields = typeof header === 'object' && header !== null ? (header as Record<string, unknown>) : {};
  if (fields.format !== BACKUP_FORMAT)
    throw new BackupFileError(`is not a Netwarden backup (its first line does not say "format":"${BACKUP_FORMAT}")`);
  if (typeof fields.format_version === 'number' && fields.format_version > BACKUP_FORMAT_VERSION) {
    throw new BackupFileError(
      `uses backup format version ${fields.format_version} (written by Netwarden ${String(fields.version)}); this Netwarden reads version ${BACKUP_FORMAT_VERSION}: upgrade Netwarden to restore it`,
    );
  }
  const problem = problemWith(BackupHeader, header);
  if (problem) throw new BackupFileError(`has a damaged header (${problem})`);
  return header as BackupHeader;
}
