import { readFile } from 'node:fs/promises';
import { hostname, networkInterfaces } from 'node:os';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type InterfaceAddress, defaultRouteFromProcRoute, detectNetwork } from '../../core/network-detect.js';
import { allowedTargets, describeSubnetProblem, networkOf, subnetProblem } from '../../core/scan-target.js';
import { suggestSubnet } from '../../core/subnet-suggestion.js';
import { Nullable, StringEnum, errorResponses } from '../schemas.js';

const Detection = Type.Object({
  local_ip: Type.String(),
  suggested_subnet: Type.String({ description: 'CIDR to scan; the real prefix, narrowed to /24 when wider than /16' }),
  hostname: Type.String(),
  interfaces: Type.Array(
    Type.Object({
      name: Type.String(),
      address: Type.String(),
      prefix_length: Type.Integer(),
      subnet: Type.String(),
      mac: Nullable(Type.String()),
    }),
  ),
});

const SubnetCheck = Type.Object({
  subnet: Type.String({ description: 'The subnet as given' }),
  network: Nullable(Type.String({ description: 'The network in canonical CIDR form (host bits cleared), null when it is not one' })),
  addresses: Nullable(Type.Integer({ description: 'How many addresses it covers, null when it is not a network' })),
  ok: Type.Boolean({ description: 'Whether a scan of it would be accepted' }),
  problem: Nullable(StringEnum(['malformed', 'too_large', 'not_allowed'] as const)),
  detail: Nullable(Type.String({ description: 'Why it would be refused, in plain words for under the field; null when ok' })),
});

const SubnetSuggestion = Type.Object({
  subnet: Nullable(Type.String({ description: 'A subnet a scan would accept, null when none of the candidates passes the rules' })),
  source: Nullable(StringEnum(['configured', 'detected', 'allowed_targets'] as const)),
  detail: Type.String({ description: 'Where the subnet came from, in plain words, for a hint under the field' }),
});

/** Reads the host's interfaces and default route; sends no packet. */
export async function readLocalNetwork() {
  const addresses: InterfaceAddress[] = Object.entries(networkInterfaces()).flatMap(([name, list]) =>
    (list ?? []).map((a) => ({ name, address: a.address, netmask: a.netmask, family: a.family, internal: a.internal, mac: a.mac })),
  );
  const routes = await readFile('/proc/net/route', 'utf8').catch(() => '');
  return detectNetwork(addresses, hostname(), defaultRouteFromProcRoute(routes));
}

export const networkRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/network/detect',
    {
      schema: {
        tags: ['config'],
        summary: "Detect the host's local network to suggest a subnet to scan",
        description: "Read from the host's interfaces and routing table; no packet is sent.",
        response: { 200: Detection, ...errorResponses(401) },
      },
    },
    async () => readLocalNetwork(),
  );

  app.get(
    '/api/network/suggestion',
    {
      schema: {
        tags: ['config'],
        summary: 'The subnet to start the set-up wizard from',
        description:
          'The first of these that passes the rules of `GET /api/network/check`: the configured `network.subnet`; the local network ' +
          "detected from the host's interfaces (as `GET /api/network/detect`); the first allowed scan target no larger than " +
          '`scanning.max_hosts`, else the start of the first one cut to that size. `source` says which, `detail` in plain words; ' +
          'null when none passes. Nothing is scanned or saved; no packet is sent.',
        response: { 200: SubnetSuggestion, ...errorResponses(401) },
      },
    },
    async () => {
      const { store, scans } = app.services;
      const settings = await store.settings.get();
      const detected = await readLocalNetwork().catch(() => null);
      return suggestSubnet({
        configured: settings.network.subnet,
        detected: detected?.suggested_subnet ?? null,
        allowed: allowedTargets(scans.scanAllowOverride, settings),
        maxHosts: settings.scanning.max_hosts,
      });
    },
  );

  app.get(
    '/api/network/check',
    {
      schema: {
        tags: ['config'],
        summary: 'Whether a subnet could be scanned, checked as it is typed',
        description:
          'Applies the rules a scan of the subnet must pass (the same code as `POST /api/scan/trigger`): an IPv4 network, no larger than ' +
          '`scanning.max_hosts`, inside the allowed scan targets (`scanning.allowed_targets`, or `NETWARDEN_SCAN_ALLOW` where set). ' +
          'Always 200 for any subnet text: `ok` says whether it passes, `problem` which rule it breaks and `detail` why, in plain words. ' +
          'The set-up wizard and the settings page call it while the subnet is typed. Nothing is scanned or saved.',
        querystring: Type.Object(
          { subnet: Type.String({ maxLength: 100, description: 'The subnet as typed, such as 192.168.1.0/24' }) },
          { additionalProperties: false },
        ),
        response: { 200: SubnetCheck, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const { store, scans } = app.services;
      const subnet = request.query.subnet.trim();
      const settings = await store.settings.get();
      const problem = subnetProblem(subnet, settings, allowedTargets(scans.scanAllowOverride, settings));
      const network = problem?.kind === 'malformed' ? null : networkOf(subnet);
      return {
        subnet: request.query.subnet,
        network: network?.cidr ?? null,
        addresses: network?.size ?? null,
        ok: problem === null,
        problem: problem?.kind ?? null,
        detail: problem ? describeSubnetProblem(problem) : null,
      };
    },
  );
};
