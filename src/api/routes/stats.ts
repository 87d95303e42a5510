import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp, errorResponses } from '../schemas.js';

const Stats = Type.Object({
  total_devices: Type.Integer(),
  devices_at_risk: Type.Integer({ description: 'Devices whose risk level is medium, high or critical' }),
  critical: Type.Integer(),
  high: Type.Integer(),
  medium: Type.Integer(),
  low: Type.Integer(),
  online_devices: Type.Integer(),
  open_ports: Type.Integer(),
  total_scans: Type.Integer({ description: 'Completed scans' }),
  last_scan: Nullable(Timestamp),
});

const Trends = Type.Object({
  days: Type.Integer(),
  points: Type.Array(
    Type.Object({
      scan_id: Type.Integer(),
      timestamp: Timestamp,
      devices: Type.Integer(),
      at_risk: Type.Integer(),
      critical: Type.Integer(),
      high: Type.Integer(),
      open_ports: Type.Integer(),
      avg_risk_score: Type.Number(),
      changes: Type.Integer(),
    }),
  ),
});

export const statsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app.services;

  app.get(
    '/api/stats',
    {
      schema: {
        tags: ['stats'],
        summary: 'Counts over the device inventory',
        description: '`last_scan` is when the latest completed scan finished, or null.',
        response: { 200: Stats, ...errorResponses(401) },
      },
    },
    async () => store.stats.stats(),
  );

  app.get(
    '/api/trends',
    {
      schema: {
        tags: ['stats'],
        summary: 'One point per completed network scan over the last `days` days, oldest first',
        querystring: Type.Object(
          { days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650, default: 30 })) },
          { additionalProperties: false },
        ),
        response: { 200: Trends, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const days = request.query.days ?? 30;
      return { days, points: await store.stats.trends(days) };
    },
  );
};
