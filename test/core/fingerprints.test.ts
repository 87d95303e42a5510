import { describe, expect, it } from 'vitest';
import { DEVICE_TYPES } from '../../src/core/device-types.js';
import { parseCpe } from '../../src/core/cve/cpe.js';
import {
  FINGERPRINT_FIELDS,
  FINGERPRINT_RULES,
  canonicalOs,
  cleanVendor,
  matchRule,
  observationOfExample,
  yieldOf,
  type FingerprintExample,
  type FingerprintRule,
} from '../../src/core/fingerprints.js';
import type { ProbeResults } from '../../src/core/probe-results.js';
import { recognise, type RecognitionInput } from '../../src/core/recognition.js';

const show = (e: FingerprintExample): string => (typeof e === 'string' ? e : JSON.stringify(e));

/** Every rule with each of its examples, so each case is its own test and names its rule. */
function cases(kind: 'match' | 'noMatch'): [string, string, FingerprintRule, FingerprintExample][] {
  return FINGERPRINT_RULES.flatMap((rule) =>
    rule.examples[kind].map((e) => [rule.id, show(e), rule, e] as [string, string, FingerprintRule, FingerprintExample]),
  );
}

describe('the fingerprint table', () => {
  it('gives every rule a unique id, a label, at least one example that fires it and one that must not', () => {
    const ids = new Set<string>();
    const problems: string[] = [];
    for (const rule of FINGERPRINT_RULES) {
      if (ids.has(rule.id)) problems.push(`${rule.id}: duplicate id`);
      ids.add(rule.id);
      if (!/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(rule.id)) problems.push(`${rule.id}: id is not kebab-case`);
      if (rule.label.trim() === '') problems.push(`${rule.id}: no label`);
      if (rule.examples.match.length === 0) problems.push(`${rule.id}: no example that fires it`);
      if (rule.examples.noMatch.length === 0) problems.push(`${rule.id}: no example that must not fire it`);
      if (rule.when.length === 0) problems.push(`${rule.id}: no condition`);
    }
    expect(problems).toEqual([]);
    expect(FINGERPRINT_RULES.length).toBeGreaterThan(100);
  });

  it('yields only what the contract allows: types from the §15 list, confidences 0–100, a version only with its OS', () => {
    const problems: string[] = [];
    for (const rule of FINGERPRINT_RULES) {
      if (rule.type !== undefined && !(DEVICE_TYPES as readonly string[]).includes(rule.type)) problems.push(`${rule.id}: type ${rule.type}`);
      if (rule.type === 'unknown') problems.push(`${rule.id}: yields unknown`);
      for (const c of [rule.confidence, ...Object.values(rule.confidences ?? {})]) {
        if (!Number.isInteger(c) || c < 0 || c > 100) problems.push(`${rule.id}: confidence ${c}`);
      }
      if (rule.osVersion !== undefined && rule.os === undefined) problems.push(`${rule.id}: OS version without OS`);
      if (!rule.type && !rule.vendor && !rule.model && !rule.os && !rule.cpes?.length) problems.push(`${rule.id}: yields nothing`);
      for (const cond of rule.when) {
        if (cond.field === 'ports') continue;
        const fields = typeof cond.field === 'string' ? [cond.field] : cond.field;
        for (const f of fields) if (!(FINGERPRINT_FIELDS as readonly string[]).includes(f)) problems.push(`${rule.id}: field ${f}`);
        if (cond.pattern.global || cond.pattern.sticky) problems.push(`${rule.id}: stateful pattern`);
      }
    }
    expect(problems).toEqual([]);
  });

  it.each(cases('match'))('%s fires on %s', (_id, _shown, rule, example) => {
    const hit = matchRule(rule, observationOfExample(rule, example));
    expect(hit).not.toBeNull();
    const y = yieldOf(hit!);
    // What the rule promises, it delivers on its own examples (placeholders filled or left out, never raw).
    for (const v of [y.vendor, y.model, y.os_name, y.os_version, ...y.cpes]) expect(v ?? '').not.toMatch(/[{}]/);
    for (const cpe of y.cpes) expect(parseCpe(cpe), `${rule.id}: ${cpe}`).not.toBeNull();
    if (rule.type) expect(y.device_type).toBe(rule.type);
  });

  it.each(cases('noMatch'))('%s does not fire on %s', (_id, _shown, rule, example) => {
    expect(matchRule(rule, observationOfExample(rule, example))).toBeNull();
  });

  it('fills captures into models, versions and CPEs, and leaves out a CPE version it did not see', () => {
    const rule = FINGERPRINT_RULES.find((r) => r.id === 'pfsense-snmp')!;
    const hit = matchRule(rule, observationOfExample(rule, 'pfSense gw.home.arpa 2.7.2-RELEASE FreeBSD 14.0-CURRENT amd64'))!;
    expect(yieldOf(hit)).toEqual({
      device_type: 'firewall',
      vendor: 'Netgate',
      model: null,
      os_name: 'pfSense',
      os_version: '2.7.2',
      cpes: ['cpe:/a:netgate:pfsense:2.7.2'],
    });
    const dropbear = FINGERPRINT_RULES.find((r) => r.id === 'dropbear-ssh')!;
    expect(yieldOf(matchRule(dropbear, observationOfExample(dropbear, 'SSH-2.0-dropbear'))!).cpes).toEqual([
      'cpe:/a:dropbear_ssh_project:dropbear_ssh',
    ]);
    const synology = FINGERPRINT_RULES.find((r) => r.id === 'synology-upnp-nas')!;
    expect(yieldOf(matchRule(synology, observationOfExample(synology, { upnp_manufacturer: 'Synology', upnp_model: 'DS920+' }))!)).toMatchObject({
      model: 'DS920+',
      cpes: ['cpe:/o:synology:diskstation_manager', 'cpe:/h:synology:ds920+'],
    });
  });

  it('names vendors by their brand and operating systems one way', () => {
    expect(cleanVendor('Routerboard.com')).toBe('MikroTik');
    expect(cleanVendor('TP-LINK TECHNOLOGIES CO.,LTD.')).toBe('TP-Link');
    expect(cleanVendor('Seiko Epson Corporation')).toBe('Epson');
    expect(cleanVendor('Hangzhou Hikvision Digital Technology Co.,Ltd.')).toBe('Hikvision');
    expect(cleanVendor('Acme Widgets GmbH')).toBe('Acme Widgets');
    expect(cleanVendor('Inc.')).toBe('Inc.');
    expect(canonicalOs('Mac OS X')).toBe('macOS');
    expect(canonicalOs('DiskStation Manager')).toBe('DSM');
    expect(canonicalOs('Haiku')).toBe('Haiku');
  });
});

/**
 * A rule example as recognise() input: the probe results, MAC, vendor, names and ports that carry
 * those field values, so the examples also test that recognise() reads every field where the rules
 * expect it.
 */
function inputOfExample(rule: FingerprintRule, example: FingerprintExample): RecognitionInput {
  const first = rule.when[0];
  const values: Partial<Record<string, string[]>> = {};
  let ports: readonly (number | `${number}/udp`)[] = [];
  if (typeof example === 'string') {
    if (first.field === 'ports') throw new Error(`${rule.id}: string example for a ports condition`);
    values[typeof first.field === 'string' ? first.field : first.field[0]] = [example];
  } else {
    for (const [field, value] of Object.entries(example)) {
      if (field === 'ports') ports = value as readonly (number | `${number}/udp`)[];
      else values[field] = typeof value === 'string' ? [value] : [...(value as readonly string[])];
    }
  }
  const one = (field: string): string | null => values[field]?.[0] ?? null;
  const probes: ProbeResults = {};
  if (values.snmp_sysdescr || values.snmp_sysobjectid) {
    probes.snmp = { community: 'public', sysDescr: one('snmp_sysdescr'), sysObjectID: one('snmp_sysobjectid'), sysName: null, engineId: null };
  }
  if (['upnp_manufacturer', 'upnp_model', 'upnp_device_type', 'upnp_friendly_name', 'upnp_server'].some((f) => values[f])) {
    probes.ssdp = {
      location: null,
      server: one('upnp_server'),
      friendlyName: one('upnp_friendly_name'),
      manufacturer: one('upnp_manufacturer'),
      modelName: one('upnp_model'),
      modelNumber: null,
      udn: null,
      deviceType: one('upnp_device_type'),
    };
  }
  if (values.mdns_service || values.mdns_txt || values.mdns_name) {
    const txt: Record<string, string> = {};
    for (const kv of values.mdns_txt ?? []) txt[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1);
    probes.mdns = { names: values.mdns_name ?? [], services: values.mdns_service ?? [], instances: [], txt };
  }
  const http = [
    ...(values.http_title ?? []).map((title) => ({ port: 80, tls: false, status: 200, title, server: null, faviconHash: null })),
    ...(values.http_server ?? []).map((server) => ({ port: 8080, tls: false, status: 200, title: null, server, faviconHash: null })),
  ];
  if (http.length > 0) probes.http = http;
  const tls = [
    ...(values.tls_subject ?? []).map((subject) => ({ subject, issuer: null })),
    ...(values.tls_issuer ?? []).map((issuer) => ({ subject: null, issuer })),
  ].map((t) => ({ port: 443, ...t, sans: [], notBefore: null, notAfter: null, selfSigned: true, keyHash: null }));
  if (tls.length > 0) probes.tls = tls;
  if (values.ssh_banner) probes.ssh = values.ssh_banner.map((banner) => ({ port: 22, banner, keyType: null, fingerprint: null }));
  if (values.netbios_name) probes.netbios = { name: values.netbios_name[0], workgroup: null, mac: null };
  if (values.nmap_os_name || values.nmap_os_class || values.nmap_os_cpe) {
    const [vendor, family, generation, type] = (one('nmap_os_class') ?? '|||').split('|');
    probes.nmapOs = [{ name: one('nmap_os_name') ?? 'unnamed', accuracy: 100, vendor, family, generation, type, cpe: values.nmap_os_cpe ?? [] }];
  }
  const openPorts = [
    ...ports.map((p) => (typeof p === 'number' ? { port: p, protocol: 'tcp' } : { port: Number(p.split('/')[0]), protocol: 'udp' })),
    ...(values.port_product ?? []).map((product, i) => ({ port: 40000 + i, protocol: 'tcp', product })),
  ].map((p) => ({ service: null, product: null, version: null, ...p }));
  return { probes, mac: one('mac'), ouiVendor: one('oui_vendor'), hostname: one('hostname'), openPorts };
}

describe('the fingerprint table through recognise()', () => {
  it.each(cases('match'))('%s is evidence for %s', (id, _shown, rule, example) => {
    const r = recognise(inputOfExample(rule, example));
    expect(r.evidence.some((e) => e.rule === id)).toBe(true);
  });
});
