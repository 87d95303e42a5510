import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Store } from '../../store/index.js';
import { errorResponses } from '../schemas.js';

/** The configured zones, then any other zone still assigned to a device. */
export async function listZones(store: Store): Promise<string[]> {
  const configured = (await store.settings.get()).zones;
  const assigned = await store.devices.assignedZones();
  return [...configured, ...assigned.filter((z) => !configured.includes(z))];
}

export const zoneRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/zones',
    {
      schema: {
        tags: ['config'],
        summary: 'Zone names a device can be assigned to',
        description: 'The configured zones (config `zones`), then any other zone still assigned to a device.',
        response: { 200: Type.Array(Type.String()), ...errorResponses(401) },
      },
    },
    async () => listZones(app.services.store),
  );
};
