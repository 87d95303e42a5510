import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp, errorResponses } from '../schemas.js';

const EvaluationStatus = Type.Object({
  state: Type.Union([Type.Literal('idle'), Type.Literal('running')], {
    description: '`running` while every device is being assessed again after a change of the risk rules or the CVE data',
  }),
  devices_total: Type.Integer({ description: 'Devices to assess in the re-evaluation under way (or the last one)' }),
  devices_done: Type.Integer({ description: 'Of those, how many are done' }),
  started_at: Nullable(Timestamp),
  finished_at: Nullable(Timestamp),
});

export const evaluationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/evaluation/status',
    {
      schema: {
        tags: ['scans'],
        summary: 'Progress of the background re-evaluation after a rule or CVE data change',
        description:
          'A change of `scanning.risk_rules` or of the CVE dataset (`netwarden cve import`) has every device assessed again once, ' +
          'in the background, by one instance; this shows how far it got. Scans in between assess the devices they see themselves.',
        response: { 200: EvaluationStatus, ...errorResponses(401) },
      },
    },
    async () => app.services.reevaluator.status(),
  );
};
