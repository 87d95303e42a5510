/**
 * CSV as RFC 4180 writes it, for exports: fields separated by commas, records ended by CRLF, a
 * field quoted (with its quotes doubled) when it holds a comma, a semicolon, a tab, a quote, CR or
 * LF. Spreadsheets run a cell that starts with `=`, `+`, `-` or `@` as a formula (CSV injection),
 * so such text is written with a leading `'`; so is text starting with a tab or CR, which some
 * spreadsheets skip before looking for one. The same goes for such a character right after a
 * separator inside the text (`x;=1+1`, `a,@b`, a line break then `+`): a spreadsheet that splits
 * on `;` or tab (many locales do), or a parser that ignores quotes, would start a cell there, so a
 * `'` goes in after the separator too, and the field is quoted. Pure: values in, text out.
 */

/** What a cell may hold: text, numbers and flags as they are, a list of values joined by spaces, nothing for null. */
export type CsvValue = string | number | boolean | null | undefined | readonly (string | number)[];

/** The line end RFC 4180 prescribes. */
export const CSV_LINE_END = '\r\n';

const FORMULA_START = /^[=+\-@\t\r]/;
/** Where a formula could start inside a text: right after a separator a spreadsheet may split on. */
const FORMULA_AFTER_SEPARATOR = /(?<=[,;\t\r\n])(?=[=+\-@\t\r])/g;
const NEEDS_QUOTES = /[",;\t\r\n]/;

/** Text a spreadsheet would read as a formula, defused with a `'` at its start and after each separator that starts one. */
export function defuseFormula(text: string): string {
  const inner = text.replace(FORMULA_AFTER_SEPARATOR, "'");
  return FORMULA_START.test(inner) ? `'${inner}` : inner;
}

/** One field: converted to text, defused when it is text, quoted when it must be. */
export function csvField(value: CsvValue): string {
  let text: string;
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') text = String(value);
  else if (Array.isArray(value)) text = defuseFormula(value.join(' '));
  else text = defuseFormula(value as string);
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One record with its CRLF. */
export function csvRecord(values: readonly CsvValue[]): string {
  return values.map(csvField).join(',') + CSV_LINE_END;
}

/** Records of objects: the header row then one record per row, fields in the order of `columns`. */
export function csvRows<T>(columns: readonly (keyof T & string)[], rows: readonly T[], header = false): string {
  let out = header ? csvRecord(columns) : '';
  for (const row of rows) out += csvRecord(columns.map((c) => row[c] as CsvValue));
  return out;
}
