import { describe, expect, it } from 'vitest';
import { csvField, csvRecord, csvRows, defuseFormula } from '../../src/core/csv.js';

describe('CSV (RFC 4180, formulas defused)', () => {
  it('writes plain values as they are and empty values as empty fields', () => {
    expect(csvRecord(['a', 1, 0, true, false, null, undefined, ''])).toBe('a,1,0,true,false,,,\r\n');
    expect(csvField([22, 80, 443])).toBe('22 80 443');
    expect(csvField([])).toBe('');
  });

  it('quotes fields holding a comma, a quote, CR or LF, doubling quotes', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('two\r\nlines')).toBe('"two\r\nlines"');
    expect(csvField('"')).toBe('""""');
    expect(csvField(' padded ')).toBe(' padded ');
  });

  it("prefixes text a spreadsheet would run as a formula with '", () => {
    for (const text of ['=1+1', '+1', '-1', '@SUM(A1)', '\tx', '\rx']) expect(defuseFormula(text), JSON.stringify(text)).toBe(`'${text}`);
    for (const text of ['1+1', 'a=b', "'quoted", '', ' =x']) expect(defuseFormula(text), JSON.stringify(text)).toBe(text);
    expect(csvField('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
    expect(csvField('-2,3')).toBe(`"'-2,3"`);
    expect(csvField('\rcmd')).toBe(`"'\rcmd"`);
    // Numbers are numbers, not text: a negative number stays one.
    expect(csvField(-5)).toBe('-5');
  });

  it('defuses a formula after a separator inside the text, and quotes the field', () => {
    // A spreadsheet splitting on ';' or tab (or a parser ignoring quotes) would start a cell there.
    expect(defuseFormula('x;=1+1')).toBe("x;'=1+1");
    expect(csvField('x;=1+1')).toBe(`"x;'=1+1"`);
    expect(csvField('a,@SUM(A1)')).toBe(`"a,'@SUM(A1)"`);
    expect(csvField('a\t-2')).toBe(`"a\t'-2"`);
    expect(csvField('ok\n+cmd')).toBe(`"ok\n'+cmd"`);
    expect(csvField('ok\r\n=cmd')).toBe(`"ok\r\n'=cmd"`);
    expect(csvField('x;\t=1')).toBe(`"x;'\t'=1"`);
    expect(csvField('=a;+b')).toBe(`"'=a;'+b"`);
    // Lists are text too.
    expect(csvField(['a;=1', 'b'])).toBe(`"a;'=1 b"`);
    // A separator followed by anything else is left as written (and quoted: it may split a cell).
    expect(csvField('a;b')).toBe('"a;b"');
    expect(csvField('a; =b')).toBe('"a; =b"');
    expect(csvField('1+1=2')).toBe('1+1=2');
  });

  it('writes rows of objects in column order, with the header row when asked', () => {
    const rows = [
      { id: 1, name: 'a', ports: [1, 2] },
      { id: 2, name: '=x', ports: [] },
    ];
    expect(csvRows<(typeof rows)[number]>(['id', 'name', 'ports'], rows, true)).toBe("id,name,ports\r\n1,a,1 2\r\n2,'=x,\r\n");
    expect(csvRows<(typeof rows)[number]>(['name'], rows)).toBe("a\r\n'=x\r\n");
  });
});
