/**
 * The name sources of one scan: started when the scan starts, in parallel with discovery, and
 * applied where discovery's hosts are recorded (core/name-sources.ts applyNames: fills hostnames
 * and MACs the scan did not see, never overrides what it saw). Each enabled source gets
 * NAME_SOURCE_TIMEOUT_MS in all; a source that is down, slow or answers garbage never fails the
 * scan: it becomes a warning ("Pi-hole (http://pi.hole): no answer within 5 s").
 */
import type { ObservedLink } from '../core/device-links.js';
import { NAME_SOURCE_LABELS, type DiscoveredHost, type NameSource } from '../core/model.js';
import { applyNames, normalizeRecords, type NameRecord } from '../core/name-sources.js';
import type { Settings } from '../core/settings.js';
import { fetchAdGuard } from './adguard.js';
import { NameSourceError } from './http.js';
import { readLeaseFile } from './lease-file.js';
import { fetchPihole } from './pihole.js';
import type { SourceContext } from './types.js';
import { fetchUnifiNetwork } from './unifi.js';
import type { OutboundGuard } from '../util/outbound.js';

/** Time a source has to answer, everything included (login, lists, logout). */
export const NAME_SOURCE_TIMEOUT_MS = 5_000;

export interface NameLookupResult {
  records: NameRecord[];
  /**
   * Which device hangs off which switch or access point, from the sources that know (UniFi), and
   * those sources: only a source that answered has its stored links replaced.
   */
  links: ObservedLink[];
  linkSources: NameSource[];
  /** One line per source that failed, naming it and what went wrong. */
  warnings: string[];
}

export interface LookupOptions {
  /** The scan's signal: its end stops every source. */
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Which addresses the sources may reach (default: no loopback, link-local or unspecified address, as without NETWARDEN_OUTBOUND_ALLOW; services.ts passes the configured one). */
  guard?: OutboundGuard;
}

type Client = (ctx: SourceContext) => Promise<{ records: NameRecord[]; links?: ObservedLink[] }>;

/** The enabled sources, each as a client and what names it in a warning. */
function enabledSources(s: Settings['name_sources']): { source: NameSource; where: string; run: Client }[] {
  const out: { source: NameSource; where: string; run: Client }[] = [];
  const names =
    (fetch: (ctx: SourceContext) => Promise<NameRecord[]>): Client =>
    async (ctx) => ({ records: await fetch(ctx) });
  if (s.pihole.enabled) out.push({ source: 'pihole', where: s.pihole.url, run: names((ctx) => fetchPihole(s.pihole, ctx)) });
  if (s.adguard.enabled) out.push({ source: 'adguard', where: s.adguard.url, run: names((ctx) => fetchAdGuard(s.adguard, ctx)) });
  if (s.unifi.enabled) out.push({ source: 'unifi', where: `${s.unifi.url}, site ${s.unifi.site}`, run: (ctx) => fetchUnifiNetwork(s.unifi, ctx) });
  if (s.dhcp_leases.enabled) out.push({ source: 'dhcp_leases', where: s.dhcp_leases.path, run: names((ctx) => readLeaseFile(s.dhcp_leases, ctx)) });
  return out;
}

/** Asks every enabled source at once; never rejects. */
export async function lookupNames(sources: Settings['name_sources'], options: LookupOptions = {}): Promise<NameLookupResult> {
  const timeoutMs = options.timeoutMs ?? NAME_SOURCE_TIMEOUT_MS;
  const results = await Promise.all(
    enabledSources(sources).map(async ({ source, where, run }) => {
      const stop = new AbortController();
      const onAbort = () => stop.abort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          stop.abort();
          reject(new NameSourceError(`no answer within ${timeoutMs / 1000} s`));
        }, timeoutMs);
      });
      try {
        const answer = await Promise.race([run({ signal: stop.signal, timeoutMs, guard: options.guard }), timeout]);
        return {
          records: normalizeRecords(answer.records.filter((r) => r.source === source)),
          links: answer.links?.filter((l) => l.source === source),
          source,
          warning: null,
        };
      } catch (err) {
        const why = err instanceof NameSourceError ? err.message : `failed: ${(err as Error).message}`;
        return { records: [], links: undefined, source, warning: `name source ${NAME_SOURCE_LABELS[source]} (${where}): ${why}` };
      } finally {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        stop.abort();
      }
    }),
  );
  return {
    records: results.flatMap((r) => r.records),
    links: results.flatMap((r) => r.links ?? []),
    linkSources: results.flatMap((r) => (r.links ? [r.source] : [])),
    warnings: results.flatMap((r) => (r.warning ? [r.warning] : [])),
  };
}

/**
 * One scan's lookup: started at once, applied to discovery's hosts when they are recorded. The
 * warnings are handed out with the first application only (a scan records discovery once).
 */
export class NameLookup {
  private reported = false;

  private constructor(private readonly pending: Promise<NameLookupResult>) {}

  static start(sources: Settings['name_sources'], options: LookupOptions = {}): NameLookup {
    return new NameLookup(lookupNames(sources, options));
  }

  async apply(hosts: readonly DiscoveredHost[]): Promise<{ hosts: DiscoveredHost[]; warnings: string[] }> {
    const { records, warnings } = await this.pending;
    const first = !this.reported;
    this.reported = true;
    return { hosts: applyNames(hosts, records), warnings: first ? warnings : [] };
  }

  /** The links the sources stated and the sources that answered with links (empty when none did). */
  async links(): Promise<{ links: ObservedLink[]; sources: NameSource[] }> {
    const { links, linkSources } = await this.pending;
    return { links, sources: linkSources };
  }
}
