import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { Change } from '../../schemas/change.js';
import { DeviceSummary } from '../../schemas/device.js';
import {
  CHANGE_CSV_COLUMNS,
  DEVICE_CSV_COLUMNS,
  EXPORT_CONTENT_TYPES,
  EXPORT_FORMATS,
  exportFileName,
  exportStream,
  type ExportFormat,
  type ExportRequest,
} from '../export-stream.js';
import { CHANGE_FILTER_PARAMS, DEVICE_FILTER_PARAMS, changeFiltersOf, deviceFiltersOf } from '../list-filters.js';
import { StringEnum, errorResponses } from '../schemas.js';

const FORMAT = {
  format: Type.Optional(
    StringEnum(EXPORT_FORMATS, { default: 'json', description: '`json` (default): one JSON array; `csv`: RFC 4180 with a header row' }),
  ),
};

const COMMON = [
  'Returns **every** matching row (no `limit`), streamed as it is read: the server reads the rows a page at a time, so an export of',
  '100,000 devices takes no more memory than one of 100. Sent as an attachment (`Content-Disposition: attachment; filename=…`).',
  '',
  '`format=json` (the default) is one JSON array; `format=csv` is RFC 4180: a header row, CRLF line ends, fields quoted when they',
  "hold a comma, a semicolon, a tab, a quote or a line break. A text field starting with `=`, `+`, `-`, `@`, a tab or CR gets a leading `'` so a",
  'spreadsheet does not run it as a formula, and so does such a character right after a separator inside the text (`x;=1+1` →',
  '`"x;\'=1+1"`: a spreadsheet splitting on `;` or tab would start a cell there). Empty values are empty fields; flags are',
  '`true`/`false`. Any other `format` → 400.',
  '',
  'Rows changed while the export runs appear as they are when their page is read.',
].join('\n');

const response = (item: object, csvExample: string) => ({
  200: {
    description: 'The export, as an attachment',
    content: {
      'application/json': { schema: Type.Array(item as never) },
      'text/csv': { schema: { type: 'string', example: csvExample } },
    },
    headers: {
      'Content-Disposition': Type.String({ description: 'attachment; filename="netwarden-devices-20261122T024808Z.csv"' }),
    },
  },
  ...errorResponses(400, 401, 404),
});

export const exportRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app.services;

  /** The attachment's headers; the body is the export stream. */
  const headers = (request: ExportRequest, format: ExportFormat) => ({
    'Content-Type': EXPORT_CONTENT_TYPES[format],
    'Content-Disposition': `attachment; filename="${exportFileName(request.kind, format)}"`,
    'Cache-Control': 'no-store',
  });

  app.get(
    '/api/export/devices',
    {
      // A HEAD request would read the whole inventory only to throw it away.
      exposeHeadRoute: false,
      schema: {
        tags: ['devices'],
        summary: 'Export the device inventory (all matching devices) as CSV or JSON',
        description:
          `Takes the filters of GET /api/devices (combined with AND; unknown \`scan_id\` → 404), in IP address order. ${COMMON}\n\n` +
          `CSV columns: ${DEVICE_CSV_COLUMNS.map((c) => `\`${c}\``).join(', ')} (the device summary of CONTRACT §4 in its order, then the fields added since); ` +
          '`open_ports` holds the port numbers separated by spaces. JSON items are the device summaries GET /api/devices returns.',
        querystring: Type.Object({ ...DEVICE_FILTER_PARAMS, ...FORMAT }, { additionalProperties: false }),
        response: response(DeviceSummary, `${DEVICE_CSV_COLUMNS.join(',')}\r\n`),
      },
    },
    async (request, reply) => {
      const { format = 'json', ...filters } = request.query;
      const exported: ExportRequest = { kind: 'devices', filters: await deviceFiltersOf(store, filters) };
      return reply.headers(headers(exported, format)).send(exportStream(store, exported, format));
    },
  );

  app.get(
    '/api/export/changes',
    {
      exposeHeadRoute: false,
      schema: {
        tags: ['changes'],
        summary: 'Export the changes between scans (all matching changes) as CSV or JSON',
        description:
          `Takes the filters of GET /api/changes (combined with AND), newest first. ${COMMON}\n\n` +
          `CSV columns: ${CHANGE_CSV_COLUMNS.map((c) => `\`${c}\``).join(', ')} (the change record of CONTRACT §5). ` +
          'JSON items are the change records GET /api/changes returns.',
        querystring: Type.Object({ ...CHANGE_FILTER_PARAMS, ...FORMAT }, { additionalProperties: false }),
        response: response(Change, `${CHANGE_CSV_COLUMNS.join(',')}\r\n`),
      },
    },
    async (request, reply) => {
      const { format = 'json', ...filters } = request.query;
      const exported: ExportRequest = { kind: 'changes', filters: changeFiltersOf(filters) };
      return reply.headers(headers(exported, format)).send(exportStream(store, exported, format));
    },
  );
};
