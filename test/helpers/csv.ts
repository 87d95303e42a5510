/** A strict RFC 4180 reader for tests: CRLF record ends only, quoted fields with doubled quotes. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"' && field === '') {
      // A quoted field: runs to the closing quote ("" is one quote inside).
      i++;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += text[i++];
      }
      if (i < text.length && text[i] !== ',' && text[i] !== '\r') throw new Error(`text after a closing quote at ${i}`);
      continue;
    }
    if (c === ',') {
      record.push(field);
      field = '';
      i++;
    } else if (c === '\r') {
      if (text[i + 1] !== '\n') throw new Error(`CR without LF at ${i}`);
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i += 2;
    } else if (c === '\n') {
      throw new Error(`bare LF outside quotes at ${i}`);
    } else {
      if (c === '"') throw new Error(`quote inside an unquoted field at ${i}`);
      field += c;
      i++;
    }
  }
  if (field !== '' || record.length > 0) throw new Error('last record has no CRLF');
  return records;
}
