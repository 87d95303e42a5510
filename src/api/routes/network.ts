import { readFile } from 'node:fs/promises';
import { hostname, networkInterfaces } from 'node:os';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type InterfaceAddress, defaultRouteFromProcRoute, detectNetwork } from '../../core/network-detect.js';
import { Nullable, errorResponses } from '../schemas.js';

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
};
