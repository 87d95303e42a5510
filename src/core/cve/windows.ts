/**
 * Windows releases a scan names (`Microsoft Windows 7 - 10 microsoft-ds`, an OS name, an OS CPE):
 * entries for Windows' own services list the releases they affect, and a match is dropped when
 * the scan names only other releases.
 */

/** Every release a dataset entry may name, oldest first (a range `7 - 10` covers those between). */
export const WINDOWS_ORDER: readonly string[] = [
  '2000',
  'xp',
  '2003',
  'vista',
  '2008',
  '7',
  '2008r2',
  '8',
  '2012',
  '8.1',
  '2012r2',
  '10',
  '2016',
  '2019',
  '2022',
  '11',
  '2025',
];

function windowsRelease(token: string): string | null {
  const t = token.toLowerCase().replace(/\s+/g, ' ').trim();
  if (/^(?:server )?2008 r2$/.test(t)) return '2008r2';
  if (/^(?:server )?2012 r2$/.test(t)) return '2012r2';
  if (/^longhorn$/.test(t)) return '2008';
  const plain = t.replace(/^server /, '').replace(/ (?:sp\d|service pack \d).*$/, '');
  return WINDOWS_ORDER.includes(plain) ? plain : null;
}

/** Windows releases named in nmap product strings, OS names and CPEs: `Microsoft Windows 7 - 10 microsoft-ds` → 7 … 10. */
export function windowsReleasesIn(texts: (string | null | undefined)[]): Set<string> {
  const found = new Set<string>();
  const release = String.raw`(?:server )?(?:2000|xp|2003|vista|longhorn|2008(?: r2)?|2012(?: r2)?|2016|2019|2022|2025|8\.1|7|8|10|11)`;
  const re = new RegExp(
    String.raw`\bwindows (?:(?:embedded|standard|ultimate|professional|enterprise|home|pro) )*(${release})(?:\s*(?:-|or)\s*(${release}))?(?![\w.])`,
    'gi',
  );
  for (const text of texts) {
    if (!text) continue;
    const normal = text.replace(/cpe:\/o:microsoft:windows_?([^\s:]*)(?::([^\s:]*))?/gi, (_, p: string, v: string | undefined) => {
      const name = p.replace(/^server_/, '').replace(/_/g, ' ');
      return ` windows ${name}${v && /^r2$/i.test(v) ? ' r2' : ''} `;
    });
    for (const m of normal.matchAll(re)) {
      const a = windowsRelease(m[1]);
      const b = m[2] ? windowsRelease(m[2]) : null;
      if (a && b && /-/.test(m[0].slice(m[0].indexOf(m[1]) + m[1].length))) {
        const i = WINDOWS_ORDER.indexOf(a);
        const j = WINDOWS_ORDER.indexOf(b);
        for (let k = Math.min(i, j); k <= Math.max(i, j); k++) found.add(WINDOWS_ORDER[k]);
      } else {
        if (a) found.add(a);
        if (b) found.add(b);
      }
    }
  }
  return found;
}
