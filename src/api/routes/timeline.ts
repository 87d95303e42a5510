import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { TIMELINE_DAYS } from '../../core/timeline.js';
import { Timeline } from '../../schemas/timeline.js';
import { nowIso } from '../../store/clock.js';
import { notFound } from '../errors.js';
import { Id, errorResponses } from '../schemas.js';

const DESCRIPTION = [
  "A device's history over the last `days` days (CONTRACT §16, §18):",
  '',
  "- `scans`: the completed network scans in the window whose target held the device's address, and any completed scan that saw it,",
  '  oldest first, each with `seen` true or false.',
  "- `presence`: online/offline intervals from those scans, oldest first, with their `duration_seconds`. The rule is presence's:",
  '  seen is online; the device goes offline at the scan that makes `presence.offline_after_scans` consecutive misses. Each',
  '  boundary is the time that scan completed; the current interval has `to: null` (its duration runs to now). Misses before the',
  '  device was first seen are left out.',
  "- `changes`: the device's changes detected in the window, oldest first.",
  '',
  '`days` is 1–3650 (default 30); anything else → 400. Unknown device → 404.',
].join('\n');

export const timelineRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app.services;

  app.get(
    '/api/devices/:device_id/timeline',
    {
      schema: {
        tags: ['devices'],
        summary: "A device's presence, changes and scans over time",
        description: DESCRIPTION,
        params: Type.Object({ device_id: Id }),
        querystring: Type.Object(
          {
            days: Type.Optional(
              Type.Integer({
                minimum: TIMELINE_DAYS.min,
                maximum: TIMELINE_DAYS.max,
                default: TIMELINE_DAYS.default,
                description: `Days back from now, ${TIMELINE_DAYS.min}–${TIMELINE_DAYS.max} (default ${TIMELINE_DAYS.default})`,
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: Timeline, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const settings = await store.settings.get();
      const timeline = await store.history.timeline(
        request.params.device_id,
        request.query.days ?? TIMELINE_DAYS.default,
        nowIso(),
        settings.presence.offline_after_scans,
      );
      if (!timeline) throw notFound('Device');
      return timeline;
    },
  );
};
