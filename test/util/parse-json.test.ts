import { describe, expect, it } from 'vitest';
import { parseJsonYielding } from '../../src/util/parse-json.js';

/** Parsed with tiny pieces, so every container is taken apart. */
const parse = (text: string) => parseJsonYielding(text, { leafChars: 4, turnChars: 16 });

describe('parseJsonYielding', () => {
  it('gives what JSON.parse gives, for containers taken apart', async () => {
    const samples = [
      '{"a":[1,2,{"b":"c,d]}"}],"e":{},"f":[],"g":null,"h":true,"i":-1.5e3}',
      ' [ "x\\"y" , "\\\\" , {"k" : [ [ ] , { } ] } ] ',
      '{"s":"a\\\\\\"b,{[","n":[1,[2,[3,[4]]]]}',
      '{"__proto__":{"polluted":1},"a":1,"a":2}',
      '"just a string"',
      '12345',
    ];
    for (const text of samples) expect(await parse(text), text).toEqual(JSON.parse(text));
    const proto = (await parse('{"__proto__":{"polluted":1}}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(Object.keys(proto)).toEqual(['__proto__']);
  });

  it('throws a SyntaxError on malformed text', async () => {
    for (const text of ['{"a":1,}', '[1,,2]', '{"a" 1}', '{a:1}', '[1,2', '{"a":"b}', '[1]]', '', '{"a":1}x']) {
      await expect(parse(text), text).rejects.toThrow(SyntaxError);
    }
  });
});
