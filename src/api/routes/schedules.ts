import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { SCHEDULE_NAME_MAX_LENGTH, SCHEDULE_PREVIEW_COUNT } from '../../core/limits.js';
import { SCAN_PROFILES } from '../../core/model.js';
import type { ScheduleActor } from '../../jobs/schedules.js';
import { Schedule, SchedulePreview, ScheduleRunResult } from '../../schemas/schedule.js';
import { principalOf } from '../auth.js';
import { Id, Nullable, StringEnum, errorResponses } from '../schemas.js';
import { triggeredByOf } from './scans.js';

const CRON_DESCRIPTION =
  'Five fields: minute (0-59) hour (0-23) day-of-month (1-31) month (1-12 or jan-dec) day-of-week (0-7, 0 and 7 are Sunday, or sun-sat), ' +
  'each `*`, a value, a range (`1-5`), a step (`*/15`, `0-30/5`) or a comma list of those. When both day fields are restricted, a day matching either runs. ' +
  'Six fields (seconds), `L`, `W`, `#`, `?` and nicknames such as `@daily` are refused. Example: `0 3 * * *` (daily at 03:00).';

const fields = {
  name: Type.String({ minLength: 1, maxLength: SCHEDULE_NAME_MAX_LENGTH, description: `Unique, 1–${SCHEDULE_NAME_MAX_LENGTH} characters` }),
  cron: Type.String({ maxLength: 200, description: CRON_DESCRIPTION }),
  timezone: Type.String({ maxLength: 100, description: 'IANA time zone name the pattern is read in, such as `Europe/Berlin` (default `UTC`)' }),
  profile: StringEnum(SCAN_PROFILES, { description: 'Scan profile of its runs (default: scanning.default_profile)' }),
  subnet: Nullable(
    Type.String({
      maxLength: 43,
      description:
        'IPv4 CIDR to scan, inside the allowed scan targets and no larger than scanning.max_hosts; null scans network.subnet as configured when a run is recorded',
    }),
  ),
  enabled: Type.Boolean({ description: 'Disabled schedules keep their settings and do not fire (default true)' }),
};

const ScheduleParams = Type.Object({ schedule_id: Id });

/** The audit actor and triggered_by of a request. */
function actorOf(request: FastifyRequest): ScheduleActor {
  const principal = principalOf(request);
  return {
    actor: principal.actor,
    actorType: principal.kind === 'api_key' ? 'api_key' : 'user',
    ipAddress: request.ip,
    userAgent: request.headers['user-agent'] ?? null,
    triggeredBy: triggeredByOf(request),
  };
}

export const scheduleRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { schedules } = app.services;

  app.get(
    '/api/schedules',
    {
      schema: {
        tags: ['schedules'],
        summary: 'List scan schedules',
        description:
          '`next_run_at` is the next slot in UTC (null when disabled); `last_run_at` when a run was last recorded (a slot or run now); ' +
          '`last_scan_id` and `last_status` describe the latest scan of the schedule.',
        response: { 200: Type.Array(Schedule), ...errorResponses(401) },
      },
    },
    async () => schedules.list(),
  );

  app.post(
    '/api/schedules',
    {
      schema: {
        tags: ['schedules'],
        summary: 'Create a scan schedule',
        description:
          'Each slot of `cron` (in `timezone`) runs one scan of `subnet` with `profile`, exactly once across all instances sharing the database. ' +
          'A slot that finds a scan running queues its scan, which starts when the running one ends; at most one run per schedule waits (a further slot is skipped, audited `schedule_skipped`). ' +
          'After downtime the latest missed slot runs once at start-up and earlier ones are audited `schedule_missed`. ' +
          'Invalid values are a 400 naming the field: a pattern without exactly five fields, an unknown or empty time zone, a duplicate name, a subnet that is not a CIDR or is outside the allowed scan targets. ' +
          'Audited `schedule_created`.',
        body: Type.Object(
          {
            name: fields.name,
            cron: fields.cron,
            timezone: Type.Optional(fields.timezone),
            profile: Type.Optional(fields.profile),
            subnet: Type.Optional(fields.subnet),
            enabled: Type.Optional(fields.enabled),
          },
          { additionalProperties: false },
        ),
        response: { 201: Schedule, ...errorResponses(400, 401, 413, 415) },
      },
    },
    async (request, reply) => reply.code(201).send(await schedules.create(request.body, actorOf(request))),
  );

  // Registered before /api/schedules/:schedule_id; the router prefers the static path anyway.
  app.get(
    '/api/schedules/preview',
    {
      schema: {
        tags: ['schedules'],
        summary: 'The next run times of a cron pattern',
        description:
          'Checks `cron` and `timezone` exactly as POST /api/schedules does (400 naming `cron` or `timezone`) and lists the next `count` slots after now, in UTC. ' +
          'Nothing is stored: the web UI shows the next runs as the user types.',
        querystring: Type.Object(
          {
            cron: Type.String({ maxLength: 200, description: CRON_DESCRIPTION }),
            timezone: Type.Optional(Type.String({ maxLength: 100, default: 'UTC', description: 'IANA time zone name (default UTC)' })),
            count: Type.Optional(
              Type.Integer({
                minimum: SCHEDULE_PREVIEW_COUNT.min,
                maximum: SCHEDULE_PREVIEW_COUNT.max,
                default: 5,
                description: `How many run times, ${SCHEDULE_PREVIEW_COUNT.min}–${SCHEDULE_PREVIEW_COUNT.max} (default 5)`,
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: SchedulePreview, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const { cron, timezone = 'UTC', count = 5 } = request.query;
      return schedules.preview(cron, timezone, count);
    },
  );

  app.get(
    '/api/schedules/:schedule_id',
    {
      schema: {
        tags: ['schedules'],
        summary: 'One scan schedule',
        description:
          'The schedule as GET /api/schedules lists it; 404 `{"detail":"Schedule not found","code":"NW_SCHEDULE_NOT_FOUND"}` for an unknown id.',
        params: ScheduleParams,
        response: { 200: Schedule, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => schedules.get(request.params.schedule_id),
  );

  app.put(
    '/api/schedules/:schedule_id',
    {
      schema: {
        tags: ['schedules'],
        summary: 'Change a scan schedule (partial)',
        description:
          'Only the given fields change; the rules are those of POST /api/schedules. A changed `cron` or `timezone`, or enabling, computes `next_run_at` afresh from now ' +
          '(slots that passed while disabled are not run); disabling sets it to null. An empty body or an unknown field is a 400. Audited `schedule_updated` with old and new values.',
        params: ScheduleParams,
        body: Type.Object(
          {
            name: Type.Optional(fields.name),
            cron: Type.Optional(fields.cron),
            timezone: Type.Optional(fields.timezone),
            profile: Type.Optional(fields.profile),
            subnet: Type.Optional(fields.subnet),
            enabled: Type.Optional(fields.enabled),
          },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: Schedule, ...errorResponses(400, 401, 404, 413, 415) },
      },
    },
    async (request) => schedules.update(request.params.schedule_id, request.body, actorOf(request)),
  );

  app.delete(
    '/api/schedules/:schedule_id',
    {
      schema: {
        tags: ['schedules'],
        summary: 'Delete a scan schedule',
        description:
          'Its queued run, if any, is cancelled; a run already under way continues. Its past scans stay in the history. Audited `schedule_deleted`.',
        params: ScheduleParams,
        response: {
          200: Type.Object({ status: Type.Literal('deleted'), id: Type.Integer() }),
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request) => {
      const row = await schedules.remove(request.params.schedule_id, actorOf(request));
      return { status: 'deleted' as const, id: row.id };
    },
  );

  app.post(
    '/api/schedules/:schedule_id/run',
    {
      schema: {
        tags: ['schedules'],
        summary: 'Run a schedule now',
        description:
          'Records a run of the schedule now (enabled or not; its slots are unchanged). Never a 409: `started` when the scan started at once, ' +
          "`queued` when it waits for the running scan to end. When the schedule's previous run is still queued, that scan is the answer. " +
          "The scan's `triggered_by` is the username, or `key:<key name>` for an API key. Audited `schedule_run`. " +
          'A subnet that is no longer allowed (the settings changed) is a 400 naming `subnet`.',
        params: ScheduleParams,
        response: { 200: ScheduleRunResult, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => schedules.runNow(request.params.schedule_id, actorOf(request)),
  );
};
