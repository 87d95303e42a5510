import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { formatCompareText } from '../../core/compare.js';
import { Comparison, type DeviceComparisonRecord } from '../../schemas/compare.js';
import { Id, StringEnum, errorResponses } from '../schemas.js';

/** Devices per chunk of the streamed answer. */
const DEVICES_PER_CHUNK = 250;

/** The answer a chunk at a time: the scans and the summary, then the devices. */
function* comparisonChunks(comparison: Comparison): Generator<string> {
  const { devices, ...head } = comparison;
  yield `${JSON.stringify(head).slice(0, -1)},"devices":[`;
  for (let i = 0; i < devices.length; i += DEVICES_PER_CHUNK) {
    const items = devices.slice(i, i + DEVICES_PER_CHUNK).map((d: DeviceComparisonRecord) => JSON.stringify(d));
    yield `${i === 0 ? '\n' : ',\n'}${items.join(',\n')}`;
  }
  yield ']}\n';
}

const DESCRIPTION = [
  'Compares any two completed scans (CONTRACT §16): what differs between the devices scan `previous_id` saw and those scan `current_id` saw.',
  '',
  '- Devices are matched by identity (their MAC when one was ever seen, else their address), never by IP: a device seen in both at',
  '  different addresses is `moved` (with its port lists filled when its ports also changed), never added plus removed.',
  "- A device only one scan saw is `added` or `removed` only when the other scan's target holds its address; one outside the",
  '  other target was never looked for there and is left out. The ports of an added or removed device do not count in the totals.',
  "- A port counts as opened or closed only where **both** scans examined it on that device (each scan's `ports_examined` on the",
  '  hosts it reached, CONTRACT §14): a narrower scan never makes a port "closed". `services_changed` lists ports open in both whose',
  '  service, product or version differs (`before`/`after` as `ssh OpenSSH 8.9p1`).',
  '- `risk_before`/`risk_after` are `{"level","score"}` as each scan left the device, or null where the device was absent.',
  '- `devices` lists only devices whose status is not `unchanged` unless `include_unchanged=true`; ordered added, removed, moved,',
  '  changed, unchanged, then by address.',
  '',
  'The JSON answer is streamed: the scans and the summary, then the devices a few hundred at a time. Only the devices that may differ',
  '(another address, other ports or risk, or seen by one scan only) are read and compared; the others are counted as they are.',
  '',
  "`format=text` answers `text/plain` in the manner of nmap's `ndiff`: `-` lines are the previous scan's, `+` the current one's.",
  '',
  'Unknown scan → 404; a bad id → 400; a scan compared with itself → 400; a scan not completed → 409; scans of disjoint targets → 400.',
].join('\n');

export const compareRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app.services;

  app.get(
    '/api/scans/:current_id/compare/:previous_id',
    {
      schema: {
        tags: ['scans'],
        summary: 'Compare two completed scans',
        description: DESCRIPTION,
        params: Type.Object({
          current_id: Type.Integer({ ...Id, description: 'The later scan (its devices are "after")' }),
          previous_id: Type.Integer({ ...Id, description: 'The earlier scan (its devices are "before")' }),
        }),
        querystring: Type.Object(
          {
            include_unchanged: Type.Optional(Type.Boolean({ description: 'Also list the devices both scans saw alike (default false)' })),
            format: Type.Optional(StringEnum(['json', 'text'] as const, { description: '`json` (default), or `text`: an ndiff-style text report' })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: {
            description: 'The comparison',
            content: {
              'application/json': { schema: Comparison },
              'text/plain': { schema: { type: 'string', example: '-Scan #1 of 10.0.0.0/24 (normal), …\n+Scan #2 of 10.0.0.0/24 (normal), …\n' } },
            },
          },
          ...errorResponses(400, 401, 404, 409),
        },
      },
    },
    async (request, reply) => {
      const { include_unchanged = false, format = 'json' } = request.query;
      const comparison = await store.history.compare(request.params.current_id, request.params.previous_id, { includeUnchanged: include_unchanged });
      if (format === 'text') return reply.type('text/plain; charset=utf-8').send(formatCompareText(comparison));
      // A stream: the schema above documents what it carries; Fastify sends it as it is read, unserialised.
      return reply.type('application/json; charset=utf-8').send(Readable.from(comparisonChunks(comparison), { objectMode: false }));
    },
  );
};
