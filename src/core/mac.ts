/** MAC address helpers. Pure. */

const MAC = /^([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})$/i;

/** `aa-bb-cc-dd-ee-ff`, `aabb.ccdd.eeff`-less forms → `AA:BB:CC:DD:EE:FF`; null when not a MAC. */
export function normalizeMac(text: string | null | undefined): string | null {
  if (!text) return null;
  const m = text.trim().match(MAC);
  if (!m) return null;
  const mac = m.slice(1).join(':').toUpperCase();
  return mac === '00:00:00:00:00:00' || mac === 'FF:FF:FF:FF:FF:FF' ? null : mac;
}

/**
 * True for a locally administered address (second-lowest bit of the first octet set): phones and
 * laptops randomise their Wi-Fi MAC this way, so such a MAC may change and is a weaker identity.
 */
export function isLocallyAdministered(mac: string): boolean {
  return (Number.parseInt(mac.slice(0, 2), 16) & 0b10) !== 0;
}

/** The 24-bit OUI of a normalised MAC as six hex digits, the key of IEEE's registry. */
export function ouiOf(mac: string): string {
  return mac.replace(/:/g, '').slice(0, 6).toUpperCase();
}

/**
 * How much a MAC says about which device this is (CONTRACT §15, identity keys):
 *  - `excluded`: not one device's own address: multicast and broadcast, all zeros, and the virtual
 *    router MACs that move between routers with the role (VRRP and CARP 00:00:5E:00:01:xx, VRRP
 *    for IPv6 00:00:5E:00:02:xx, Cisco HSRP 00:00:0C:07:AC:xx and 00:00:0C:9F:Fx:xx, GLBP
 *    00:07:B4:00:xx:xx);
 *  - `weak`: locally administered: phones and laptops randomise it per network or over time,
 *    containers and VMs are given one by software;
 *  - `strong`: a globally unique address burnt into the network card.
 */
export type MacGrade = 'strong' | 'weak' | 'excluded';

export interface MacAssessment {
  grade: MacGrade;
  reason: string;
}

const VIRTUAL_ROUTER_MACS: readonly [RegExp, string][] = [
  [/^00:00:5E:00:01:/, 'a VRRP or CARP virtual router address, shared by whichever router holds the role'],
  [/^00:00:5E:00:02:/, 'a VRRP (IPv6) virtual router address, shared by whichever router holds the role'],
  [/^00:00:0C:07:AC:/, 'an HSRP virtual router address, shared by whichever router holds the role'],
  [/^00:00:0C:9F:F/, 'an HSRPv2 virtual router address, shared by whichever router holds the role'],
  [/^00:07:B4:00:/, 'a GLBP virtual gateway address, shared by the routers of the group'],
];

export function gradeMac(text: string | null | undefined): MacAssessment {
  const raw = (text ?? '').trim().replace(/[:-]/g, '').toUpperCase();
  if (raw === '000000000000') return { grade: 'excluded', reason: 'the all-zero MAC is no device’s address' };
  if (raw === 'FFFFFFFFFFFF') return { grade: 'excluded', reason: 'the broadcast MAC is no device’s address' };
  const mac = normalizeMac(text);
  if (!mac) return { grade: 'excluded', reason: 'not a MAC address' };
  if ((Number.parseInt(mac.slice(0, 2), 16) & 1) !== 0) return { grade: 'excluded', reason: 'a multicast MAC is no one device’s address' };
  for (const [pattern, reason] of VIRTUAL_ROUTER_MACS) if (pattern.test(mac)) return { grade: 'excluded', reason };
  if (isLocallyAdministered(mac)) {
    return {
      grade: 'weak',
      reason: 'a locally administered MAC: randomised by the device (private Wi-Fi address) or assigned by software, so it may change',
    };
  }
  return { grade: 'strong', reason: 'a globally unique MAC of the network card' };
}
