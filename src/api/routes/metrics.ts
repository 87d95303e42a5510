import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notAuthenticated } from '../errors.js';
import { METRICS_CONTENT_TYPE } from '../metrics.js';
import { errorResponses } from '../schemas.js';

const DESCRIPTION = [
  'Prometheus metrics in the text exposition format 0.0.4 (`text/plain; version=0.0.4`). Needs an API key',
  '(`X-API-Key` or `Authorization: Bearer`) or a session, unless the setting `metrics.public` is true; then anyone may scrape it.',
  '',
  'Read from the database at scrape time, so every instance sharing it reports the same values:',
  '- `netwarden_devices{risk_level}` (gauge): devices of the whole inventory per risk level (`critical`, `high`, `medium`, `low`, `none`);',
  '- `netwarden_devices_online` (gauge): devices online; `netwarden_open_ports` (gauge): open ports over the inventory (as in GET /api/stats);',
  '- `netwarden_scans_total{status}` (counter): scans recorded per status;',
  '- `netwarden_scan_duration_seconds` (histogram): durations of completed scans;',
  '- `netwarden_changes_total{change_type,severity}` (counter): changes detected;',
  '- `netwarden_notifications_total{type,status}` (counter): notification deliveries per channel type and status.',
  '',
  'Counts drop when `retention.days` deletes old scans, changes and deliveries (Prometheus treats that as a counter reset).',
  '',
  "This process's own: `netwarden_http_request_duration_seconds{method,route,status_code}` (histogram; `route` is the route's",
  'pattern such as `/api/devices/:device_id`, or `(unmatched)`), and the Node.js process metrics (`process_*`, `nodejs_*`).',
].join('\n');

export const metricsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store, authenticator, metrics } = app.services;

  app.get(
    '/metrics',
    {
      // Authentication depends on a setting, so the route checks it itself.
      config: { public: true },
      schema: {
        tags: ['system'],
        summary: 'Prometheus metrics (API key or session, unless metrics.public)',
        description: DESCRIPTION,
        response: {
          200: {
            description: 'The metrics',
            content: {
              'text/plain': { schema: { type: 'string', example: '# TYPE netwarden_devices gauge\nnetwarden_devices{risk_level="high"} 3\n' } },
            },
          },
          ...errorResponses(401),
        },
      },
    },
    async (request, reply) => {
      const settings = await store.settings.get();
      if (!settings.metrics.public) {
        const principal = await authenticator.authenticate(request);
        if (!principal) throw notAuthenticated();
        request.principal = principal;
      }
      return reply
        .header('Content-Type', METRICS_CONTENT_TYPE)
        .header('Cache-Control', 'no-store')
        .send(await metrics.scrape());
    },
  );
};
