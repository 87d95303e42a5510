/**
 * The scored identity resolver (issue 21 §4, CONTRACT §15; docs/recognition.md "Resolver"). Pure.
 *
 * Discovery (core/identity.ts) places each host by its MAC, else its address. That cannot know a
 * phone that came back with a new random MAC, nor a NAS answering on two NICs. Once the probes of a
 * scan have read each host's identity keys (core/identity-keys.ts), and before the scan's changes
 * are computed, this decides which of the devices the scan created are in fact devices already
 * known (or another host of the same scan), by a score over the keys they have in common:
 *
 *   strong key (SSH host key, own self-signed TLS certificate key, UPnP UDN, SNMP engine ID,
 *   globally unique MAC) = 100, medium key (mDNS name, NetBIOS name, DHCP client id, CA-issued
 *   certificate) = 60, weak key (host name, locally administered MAC, default names) = 40;
 *   addresses and excluded keys (virtual router MACs, `localhost`) = 0.
 *
 * A device created by this scan is folded into a candidate when
 *  1. their score is at least MATCH_SCORE (100) with at least one strong or medium key in common
 *     (weak keys alone never decide);
 *  2. the key is not shared: a key (other than an address) offered by SHARED_AT (3) or more devices
 *     (this scan's hosts and the known devices holding it) is a proxy, a shared or fleet certificate
 *     or a cloned system answering for many, and counts 0 (it is recorded, but weak);
 *  3. no conflict: where both have keys of a kind a device has one of (SSH host key, UPnP UDN, SNMP
 *     engine ID) and none of them agrees, they are different devices, whatever else agrees;
 *  4. a person did not separate them (an undone merge between the two devices);
 *  5. the best candidate is unique: two candidates with the same best score leave the device new.
 * The candidate is a known device (one not created by this scan) or a device created earlier in the
 * same scan (the first reported wins). Folded into a device this scan has not seen otherwise, the
 * device created is that device (`same_device`: it takes the new address and MAC; no
 * device_added/device_removed pair); into one seen at another address, it is a second address of
 * it (`second_address`: a NAS with two NICs is one device).
 *
 * Only devices created by this scan are folded: two devices that already existed are never merged
 * automatically (a person merges them; what a person merged or split stays so).
 *
 * Keys to record: each final device gets the keys of every host folded into it; a shared key, or a
 * strong key another device already holds, is recorded as weak, so that no two devices ever hold
 * one strong key.
 */
import type { IdentityKey, IdentityKeyKind, KeyStrength } from './identity-keys.js';

/** One host of this scan, as discovery recorded it, with the keys the probes read. */
export interface ResolverHost {
  /** The device discovery recorded the host as. */
  deviceId: number;
  /** Created by this scan (only those are folded). */
  isNew: boolean;
  ip: string;
  mac: string | null;
  keys: readonly IdentityKey[];
}

/** A key a known device holds (device_identity_keys). */
export interface StoredKey {
  deviceId: number;
  kind: string;
  value: string;
  strength: string;
}

export interface ResolverInput {
  /** In the order the engine reported them. */
  hosts: readonly ResolverHost[];
  /** Every key of every known device holding one of the hosts' keys. */
  stored: readonly StoredKey[];
  /** Pairs of devices a person separated (an undone merge): never folded together. */
  separated?: readonly (readonly [number, number])[];
}

export const FOLD_KINDS = ['same_device', 'second_address'] as const;
export type FoldKind = (typeof FOLD_KINDS)[number];

/** The decisions the resolver records (identity_decisions.rule). */
export const RESOLVER_RULES = {
  sameDevice: 'same_device',
  secondAddress: 'second_address',
  sharedKey: 'shared_key',
  strongKeyHeld: 'strong_key_held',
  conflict: 'conflicting_key',
  belowThreshold: 'below_threshold',
  ambiguous: 'ambiguous_match',
  separated: 'separated_by_person',
} as const;

export interface ResolverDecision {
  rule: string;
  explanation: string;
}

export interface Fold {
  /** The device this scan created, which stops existing. */
  deviceId: number;
  /** The device it is. */
  into: number;
  kind: FoldKind;
  score: number;
  /** The host (its address and MAC). */
  ip: string;
  mac: string | null;
  explanation: string;
}

export interface ResolvedDevice {
  deviceId: number;
  /** The keys to record on it (the keys of every host folded into it, some graded down). */
  keys: IdentityKey[];
  decisions: ResolverDecision[];
}

export interface Resolution {
  /** In the order decided (a later fold may go into a device an earlier one moved). */
  folds: Fold[];
  /** One per device the scan's hosts are after folding, in the hosts' order. */
  devices: ResolvedDevice[];
}

export const KEY_WEIGHT: Readonly<Record<KeyStrength, number>> = { strong: 100, medium: 60, weak: 40, excluded: 0 };
export const MATCH_SCORE = 100;
/** A key offered by this many devices identifies none of them. */
export const SHARED_AT = 3;
/** Kinds a device has one value of: two devices whose values of such a kind all differ are two devices. */
export const SINGLE_VALUED_KINDS: readonly IdentityKeyKind[] = ['ssh_host_key', 'upnp_udn', 'snmp_engine_id'];

const KIND_WORDS: Readonly<Record<string, string>> = {
  mac: 'MAC',
  ssh_host_key: 'SSH host key',
  tls_certificate: 'TLS certificate key',
  upnp_udn: 'UPnP UDN',
  mdns_name: 'mDNS name',
  netbios_name: 'NetBIOS name',
  dhcp_client_id: 'DHCP client id',
  snmp_engine_id: 'SNMP engine ID',
  hostname: 'host name',
  ip: 'address',
};

const RANK: Readonly<Record<string, number>> = { strong: 0, medium: 1, weak: 2, excluded: 3 };

/**
 * Each (kind, value) as a number, given on first sight: the maps and sets of the resolver are keyed
 * by it, not by a string joined from both (a rescan of 10,000 devices spent most of its resolution
 * joining, hashing and collecting such strings, profiled). One per call of resolveIdentities.
 */
class KeyNumbers {
  private readonly byKind = new Map<string, Map<string, number>>();
  private next = 0;

  of(kind: string, value: string): number {
    let values = this.byKind.get(kind);
    if (!values) this.byKind.set(kind, (values = new Map<string, number>()));
    let n = values.get(value);
    if (n === undefined) values.set(value, (n = this.next++));
    return n;
  }
}

/** A key as it names a device: its kind and value (and their number), with the strength it was read with. */
interface Held {
  kind: string;
  value: string;
  strength: string;
  key: number;
}

/** A device as the resolver sees it: a known device, a host of this scan, or both. */
interface Group {
  deviceId: number;
  /** Created by this scan. */
  isNew: boolean;
  /** Position of its first host in the report (Infinity: not seen by this scan). */
  order: number;
  /** The hosts of this scan it is (none: a known device this scan has not seen otherwise). */
  hosts: ResolverHost[];
  keys: Map<number, Held>;
  decisions: ResolverDecision[];
  /** Folded into another device. */
  gone: boolean;
}

export function resolveIdentities(input: ResolverInput): Resolution {
  const numbers = new KeyNumbers();
  const groups = new Map<number, Group>();
  const group = (deviceId: number): Group => {
    let g = groups.get(deviceId);
    if (!g) groups.set(deviceId, (g = { deviceId, isNew: false, order: Infinity, hosts: [], keys: new Map(), decisions: [], gone: false }));
    return g;
  };
  input.hosts.forEach((h, order) => {
    const g = group(h.deviceId);
    g.isNew = g.isNew || h.isNew;
    g.order = Math.min(g.order, order);
    g.hosts.push(h);
    for (const k of h.keys) addKey(g.keys, k, numbers.of(k.kind, k.value));
  });
  /** The strong keys stored, by who holds each (the last listed, as a map keeps them). */
  const strongHolder = new Map<number, number>();
  /** The keys each device holds (stored), by key number. */
  const storedOf = new Map<number, Set<number>>();
  for (const s of input.stored) {
    const key = numbers.of(s.kind, s.value);
    addKey(group(s.deviceId).keys, s, key);
    if (s.strength === 'strong') strongHolder.set(key, s.deviceId);
    const held = storedOf.get(s.deviceId);
    if (held) held.add(key);
    else storedOf.set(s.deviceId, new Set([key]));
  }

  // Rule 2: who offers each key (devices, not addresses). A device's keys are distinct: each list is of distinct devices.
  const holders = new Map<number, number[]>();
  for (const g of groups.values()) {
    for (const k of g.keys.values()) {
      if (k.kind === 'ip' || k.strength === 'excluded') continue;
      const list = holders.get(k.key);
      if (list) list.push(g.deviceId);
      else holders.set(k.key, [g.deviceId]);
    }
  }
  const shared = (key: number) => (holders.get(key)?.length ?? 0) >= SHARED_AT;
  // Who holds each key as devices fold (a device folded into another gives it its keys): the
  // candidates of a device are the devices holding one of its keys, never every device. The
  // holders above, and the devices folds gave a key to since.
  const gained = new Map<number, number[]>();
  const sharing = (g: Group): Group[] => {
    const ids = new Set<number>();
    for (const [key, k] of g.keys) {
      if (k.kind === 'ip' || k.strength === 'excluded') continue;
      for (const d of holders.get(key) ?? []) ids.add(d);
      for (const d of gained.get(key) ?? []) ids.add(d);
    }
    ids.delete(g.deviceId);
    return [...ids].map((id) => groups.get(id)!);
  };
  const separated = new Set((input.separated ?? []).flatMap(([a, b]) => [`${a} ${b}`, `${b} ${a}`]));

  const folds: Fold[] = [];
  const ordered = [...groups.values()].filter((g) => g.hosts.length > 0).sort((a, b) => a.order - b.order);
  for (const g of ordered) {
    if (!g.isNew || g.gone) continue;
    const candidates: { target: Group; score: number; common: Held[] }[] = [];
    const noted: ResolverDecision[] = [];
    for (const other of sharing(g)) {
      if (other.gone) continue;
      // A device created by this scan is a candidate only if reported before this one.
      if (other.isNew && other.order > g.order) continue;
      const common = commonKeys(g, other, shared);
      if (common.length === 0) continue;
      const score = common.reduce((sum, k) => sum + KEY_WEIGHT[k.strength as KeyStrength], 0);
      const decisive = common.some((k) => k.strength === 'strong' || k.strength === 'medium');
      if (score < MATCH_SCORE || !decisive) {
        noted.push({
          rule: RESOLVER_RULES.belowThreshold,
          explanation: `Shares ${listKeys(common)} with device ${other.deviceId}, but that scores ${score}${decisive ? '' : ' from weak keys only'}: ${MATCH_SCORE} from a strong or medium key is needed to be the same device`,
        });
        continue;
      }
      const conflict = conflictOf(g, other, shared);
      if (conflict) {
        noted.push({
          rule: RESOLVER_RULES.conflict,
          explanation: `Shares ${listKeys(common)} with device ${other.deviceId}, but their ${KIND_WORDS[conflict]}s differ: two different devices`,
        });
        continue;
      }
      if (separated.has(`${g.deviceId} ${other.deviceId}`)) {
        noted.push({
          rule: RESOLVER_RULES.separated,
          explanation: `Matches device ${other.deviceId} (score ${score}), but a person separated the two: they stay apart`,
        });
        continue;
      }
      candidates.push({ target: other, score, common });
    }
    candidates.sort((a, b) => b.score - a.score || a.target.order - b.target.order || a.target.deviceId - b.target.deviceId);
    const best = candidates[0];
    if (best && candidates[1]?.score === best.score) {
      g.decisions.push({
        rule: RESOLVER_RULES.ambiguous,
        explanation: `Matches devices ${candidates
          .filter((c) => c.score === best.score)
          .map((c) => c.target.deviceId)
          .join(' and ')} equally (score ${best.score}): kept as a device of its own`,
      });
      continue;
    }
    if (!best) {
      g.decisions.push(...noted);
      continue;
    }
    const { target, score, common } = best;
    const host = g.hosts[0];
    const seenElsewhere = target.hosts.length > 0;
    const kind: FoldKind = seenElsewhere ? 'second_address' : 'same_device';
    const at = `${host.ip}${host.mac ? ` (MAC ${host.mac})` : ''}`;
    const explanation =
      kind === 'same_device'
        ? `Seen at ${at}: the same device by its ${listKeys(common)} (score ${score}, ${MATCH_SCORE} needed), not a new one`
        : `${at} is a second address of this device, seen at ${target.hosts[0].ip} in the same scan: same ${listKeys(common)} (score ${score}, ${MATCH_SCORE} needed)`;
    folds.push({ deviceId: g.deviceId, into: target.deviceId, kind, score, ip: host.ip, mac: host.mac, explanation });
    target.decisions.push({ rule: kind === 'same_device' ? RESOLVER_RULES.sameDevice : RESOLVER_RULES.secondAddress, explanation });
    target.decisions.push(...g.decisions);
    target.hosts.push(...g.hosts);
    target.order = Math.min(target.order, g.order);
    for (const [key, k] of g.keys) {
      addKey(target.keys, k, key);
      if (holders.has(key)) {
        const list = gained.get(key);
        if (list) list.push(target.deviceId);
        else gained.set(key, [target.deviceId]);
      }
    }
    g.gone = true;
  }

  // The keys each final device records: its hosts' keys, shared ones and strong ones held elsewhere graded weak.
  // A device that already holds a key was told about it when it got it: no decision again on every scan.
  const alreadyHeld = (deviceId: number, key: number) => storedOf.get(deviceId)?.has(key) ?? false;
  const devices: ResolvedDevice[] = [];
  for (const g of [...groups.values()].filter((x) => !x.gone && x.hosts.length > 0).sort((a, b) => a.order - b.order)) {
    const keys = new Map<number, IdentityKey>();
    for (const h of g.hosts) {
      for (const k of h.keys) {
        const id = numbers.of(k.kind, k.value);
        const existing = keys.get(id);
        if (!existing || RANK[k.strength] < RANK[existing.strength]) keys.set(id, k);
      }
    }
    const out: IdentityKey[] = [];
    for (const [id, k] of keys) {
      if (k.kind !== 'ip' && k.strength !== 'excluded' && shared(id)) {
        const n = holders.get(id)!.length;
        out.push({
          ...k,
          strength: 'weak',
          reason: `seen on ${n} devices (a proxy, a shared or fleet certificate, a cloned system): it identifies none of them`,
        });
        if (!alreadyHeld(g.deviceId, id))
          g.decisions.push({
            rule: RESOLVER_RULES.sharedKey,
            explanation: `The ${KIND_WORDS[k.kind]} ${short(k.value)} answers for ${n} devices: not used to tell which device this is`,
          });
        continue;
      }
      if (k.strength === 'strong') {
        const holder = strongHolder.get(id);
        if (holder !== undefined && holder !== g.deviceId) {
          out.push({ ...k, strength: 'weak', reason: `device ${holder} holds this key` });
          if (!alreadyHeld(g.deviceId, id))
            g.decisions.push({
              rule: RESOLVER_RULES.strongKeyHeld,
              explanation: `The ${KIND_WORDS[k.kind]} ${short(k.value)} also answered here, but device ${holder} holds it; it stays with that device`,
            });
          continue;
        }
        strongHolder.set(id, g.deviceId);
      }
      out.push(k);
    }
    devices.push({ deviceId: g.deviceId, keys: out, decisions: g.decisions });
  }
  return { folds, devices };
}

function addKey(keys: Map<number, Held>, k: Omit<Held, 'key'>, key: number): void {
  const existing = keys.get(key);
  if (!existing || (RANK[k.strength] ?? 3) < (RANK[existing.strength] ?? 3))
    keys.set(key, { kind: k.kind, value: k.value, strength: k.strength, key });
}

/** The keys two devices have in common that count (no address, no excluded or shared key), each at its weaker reading. */
function commonKeys(a: Group, b: Group, shared: (key: number) => boolean): Held[] {
  const out: Held[] = [];
  for (const [id, k] of a.keys) {
    if (k.kind === 'ip' || k.strength === 'excluded') continue;
    const other = b.keys.get(id);
    if (!other || other.strength === 'excluded' || shared(id)) continue;
    out.push(RANK[other.strength] > RANK[k.strength] ? other : k);
  }
  return out.sort((x, y) => RANK[x.strength] - RANK[y.strength] || (x.kind < y.kind ? -1 : x.kind > y.kind ? 1 : 0));
}

/** A single-valued kind both have strong keys of, none in common: the kind, else null. */
function conflictOf(a: Group, b: Group, shared: (key: number) => boolean): string | null {
  for (const kind of SINGLE_VALUED_KINDS) {
    const of = (g: Group) => [...g.keys.values()].filter((k) => k.kind === kind && k.strength === 'strong' && !shared(k.key)).map((k) => k.value);
    const mine = of(a);
    const theirs = new Set(of(b));
    if (mine.length > 0 && theirs.size > 0 && !mine.some((v) => theirs.has(v))) return kind;
  }
  return null;
}

function listKeys(keys: readonly Held[]): string {
  const words = keys.map((k) => `${KIND_WORDS[k.kind] ?? k.kind} ${short(k.value)}`);
  return words.length <= 1 ? (words[0] ?? 'nothing') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}

/** Long hashes shortened for a sentence. */
function short(value: string): string {
  return value.length > 24 ? `${value.slice(0, 20)}…` : value;
}
