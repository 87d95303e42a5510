/**
 * CPE names as scanners and NVD write them: `cpe:/a:openbsd:openssh:8.9p1` (CPE 2.2 URI, nmap) and
 * `cpe:2.3:a:openbsd:openssh:8.9:p1:*:*:*:*:*:*` (CPE 2.3 formatted string, NVD).
 */

export interface ParsedCpe {
  part: 'a' | 'o' | 'h';
  vendor: string;
  product: string;
  version: string | null;
}

/** Parses `cpe:/a:vendor:product[:version…]` (CPE 2.2, as nmap writes it) or `cpe:2.3:a:vendor:product:version:…`. */
export function parseCpe(cpe: string): ParsedCpe | null {
  const text = cpe.trim();
  let fields: string[];
  if (/^cpe:2\.3:/i.test(text)) {
    fields = splitCpe23(text.slice(8));
  } else if (/^cpe:\//i.test(text)) {
    fields = text
      .slice(5)
      .split(':')
      .map((f) => safeDecode(f));
  } else {
    return null;
  }
  const [part, vendor, product, version] = fields;
  if ((part !== 'a' && part !== 'o' && part !== 'h') || !vendor || !product) return null;
  const v = version === undefined || version === '' || version === '*' || version === '-' ? null : version;
  return { part, vendor: vendor.toLowerCase(), product: product.toLowerCase(), version: v };
}

/** Splits a CPE 2.3 formatted string on unescaped colons and removes the escapes. */
export function splitCpe23(text: string): string[] {
  const out: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\' && i + 1 < text.length) {
      current += text[++i];
    } else if (ch === ':') {
      out.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  out.push(current);
  return out;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
