import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { openBackup } from '../../store/backup.js';
import { audit } from '../audit.js';
import { refuseCrossSite, requireSession } from '../auth.js';
import { errorResponses } from '../schemas.js';

const DESCRIPTION = [
  'Downloads a consistent snapshot of the whole database, taken while the service keeps running: every table',
  '(users with their password hashes, API key and session hashes, configuration, inventory, scan history, changes,',
  'audit log). Needs a logged-in session: an API key gets 403, and so does a request another site makes in the browser. Keep the file as private as the database itself.',
  '',
  'The file (`netwarden-backup-<UTC time>.jsonl.gz`) is gzip-compressed JSON lines: a header line',
  '`{"format":"netwarden-backup","format_version":2,"dialect":…,"migrations":[…],"created_at":…,"version":…,"tables":[…]}`,',
  'then for each table a line `{"table":…,"columns":[…],"sequence":…}` followed by its rows as JSON arrays, and a last',
  'line `{"end":true,"rows":{…},"sha256":…}` (the SHA-256 of every line before it). It is streamed as it is produced; a',
  'download that stops early is incomplete, and a file changed since fails its checksum: a restore refuses both.',
  '',
  'Restore it from the command line with the service stopped: `netwarden restore FILE`. It restores into SQLite or',
  'PostgreSQL whichever it was taken from. Each backup is recorded in the audit log as `backup_created`.',
].join('\n');

export const backupRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store, version } = app.services;

  app.get(
    '/api/backup',
    {
      // A HEAD request would take a whole snapshot only to throw it away.
      exposeHeadRoute: false,
      schema: {
        tags: ['system'],
        summary: 'Download a backup of the whole database (needs a session)',
        description: DESCRIPTION,
        security: [{ sessionCookie: [] }],
        response: {
          200: {
            description: 'The backup file, as an attachment',
            content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } } },
            headers: {
              'Content-Disposition': Type.String({ description: 'attachment; filename="netwarden-backup-20261122T024808Z.jsonl.gz"' }),
            },
          },
          ...errorResponses(401, 403),
        },
      },
    },
    async (request, reply) => {
      requireSession(request, 'Downloading a backup');
      refuseCrossSite(request, 'Downloading a backup');
      const audited = (success: boolean, details: Record<string, unknown>) =>
        audit(request, { action: 'backup_created', resourceType: 'backup', success, details }).catch((err: unknown) =>
          request.log.warn({ err }, 'could not audit a backup'),
        );
      const backup = await openBackup(store.handle, {
        version,
        // Recorded before the last bytes go out: a complete download is always in the audit log.
        beforeEnd: (summary) =>
          audited(true, {
            file: summary.fileName,
            tables: Object.keys(summary.rows).length,
            rows: summary.totalRows,
            migrations: summary.header.migrations,
          }),
      });
      const fileName = backup.fileName;
      backup.finished.catch((err: unknown) => {
        request.log.warn({ err }, 'backup download failed');
        return audited(false, { file: fileName, error: err instanceof Error ? err.message : String(err) });
      });
      return reply
        .header('Content-Type', 'application/gzip')
        .header('Content-Disposition', `attachment; filename="${fileName}"`)
        .header('Cache-Control', 'no-store')
        .send(backup.stream);
    },
  );
};
