import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { NMAP_REPORT_MAX_BYTES } from '../../core/limits.js';
import { ReportThread, WORKER_THRESHOLD_BYTES, readNmapReport } from '../../scan/report-reader.js';
import { ScanRecord } from '../../schemas/scan.js';
import { toScanRecord } from '../../store/scans.js';
import { HttpError } from '../errors.js';
import { errorResponses } from '../schemas.js';
import { checkBytesForNul } from '../validation.js';
import { scanRequesterOf } from './scans.js';

const XML_TYPES = ['application/xml', 'text/xml'];

const DESCRIPTION = [
  'Brings an existing nmap report in as a completed scan, so a history kept with nmap and cron becomes a Netwarden timeline.',
  'Send the file `nmap -oX` wrote as the body, with `Content-Type: application/xml` (or `text/xml`), up to 50 MiB (beyond it 413).',
  '',
  'The report is read as a scan of its targets would be recorded: hosts up go into the inventory with their MACs and vendors,',
  "ports, services (product, version, CPEs, the `http-server-header` script's Server header), OS match and device type;",
  'risk, CVEs, presence and changes are computed against the previous completed scan of the same subnet, and change',
  'notifications go out as after a scan. The record has `triggered_by` `import`, `runner` `import`, status `completed`,',
  "and `devices_found` counts the hosts up. Its times are the time of the import (the report's own start time is in the audit entry `scan_imported`).",
  '',
  "- `subnet`: the single IPv4 CIDR or address (as /32) the report's command line (`args`) names, when it holds every host",
  '  listed; otherwise the smallest IPv4 CIDR covering the hosts (up and down). It must stay within `scanning.max_hosts` (400).',
  '- `profile`: `quick` for discovery only (`-sn`), `intensive` with OS detection, scripts or every port, else `normal`.',
  "  Only the ports the report examined (its `<scaninfo>`, by protocol; the record's `ports_examined`) change on the hosts it lists:",
  '  every other port keeps its last known state (shown `stale` on the device) and is never reported closed (CONTRACT §14).',
  "- Hosts without an IPv4 address (IPv6) are skipped, each named in the record's `warnings`; hosts down are not devices.",
  '- Nothing is scanned, so the allowed scan targets (`scanning.allowed_targets`, `NETWARDEN_SCAN_ALLOW`) do not apply.',
  '- 409 `{"detail","code":"NW_SCAN_BUSY","scan_id"}` while a scan of an overlapping target is running; the import may be retried when it ends.',
  '',
  'Refused with 400: XML that is not well-formed (a truncated report), well-formed XML that is not an nmap report, a',
  "report with neither an IPv4 target nor an IPv4 host, and any DTD beyond nmap's own `<!DOCTYPE nmaprun>`: an internal",
  'subset, a SYSTEM or PUBLIC identifier, any ENTITY declaration. Entities are never expanded and nothing is fetched.',
  'Also refused with 400, naming the host (counted from 1 in document order) and the element, with nothing recorded: a value out of bounds',
  '(`host 3 address "010.0.0.1": …`, `host 2 port "70000": …`, `host 2 port 22 product: …`): addresses must be strict dotted-quad IPv4',
  '(no octal, hex or leading zeros), ports 1–65535, hostnames at most 253 characters, product, version and extrainfo at most 256, a',
  "script's output at most 64 KiB. Line breaks and control characters in a hostname are removed.",
  'Another Content-Type → 415. Audited as `scan_imported`.',
].join('\n');

/** The media type of a request, lower-cased, without parameters. */
function mediaTypeOf(request: FastifyRequest): string {
  return (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
}

/** POST /api/scans/import (CONTRACT §11, §13): an nmap XML report recorded as a completed scan. */
export const scanImportRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { scans } = app.services;

  // Only this plugin reads XML bodies: the report as its bytes, decoded as UTF-8 where it is read
  // (scan/report-reader.ts: in a worker thread for a large one, so this thread neither decodes nor
  // copies it), parsed after the safety checks. No NUL, as in every other body (api/validation.ts).
  app.addContentTypeParser(XML_TYPES, { parseAs: 'buffer', bodyLimit: NMAP_REPORT_MAX_BYTES }, (request, body, done) => {
    try {
      checkBytesForNul(request, body as Buffer);
      done(null, body);
    } catch (err) {
      done(err as Error, undefined);
    }
  });

  // The thread each large report's request started while its body arrives (ReportThread), until the handler takes it.
  const threads = new WeakMap<FastifyRequest, ReportThread>();
  const discardThread = async (request: FastifyRequest) => {
    threads.get(request)?.discard();
    threads.delete(request);
  };

  app.post(
    '/api/scans/import',
    {
      bodyLimit: NMAP_REPORT_MAX_BYTES,
      // Refused before the body is read.
      onRequest: async (request) => {
        if (!XML_TYPES.includes(mediaTypeOf(request))) {
          throw new HttpError(
            'NW_UNSUPPORTED_MEDIA_TYPE',
            'body: Content-Type must be application/xml (or text/xml): send the nmap report nmap -oX wrote',
          );
        }
      },
      // Authenticated, and of an accepted type: a report large enough to be read in a thread gets
      // its thread now, which loads the reader while the body arrives.
      preParsing: async (request) => {
        const length = Number(request.headers['content-length']);
        if (length >= WORKER_THRESHOLD_BYTES && length <= NMAP_REPORT_MAX_BYTES) {
          const thread = ReportThread.start();
          if (thread !== null) threads.set(request, thread);
        }
      },
      // A request that ends without the handler taking its thread (refused, aborted) ends it.
      onResponse: discardThread,
      onRequestAbort: discardThread,
      // The body is the report's bytes (above), which the schema below describes as the text they are.
      // Only the body has a schema: a querystring or params schema added here would need a real
      // validator, so it fails when the routes are built rather than pass everything unchecked.
      validatorCompiler: ({ httpPart }) => {
        if (httpPart !== 'body') throw new Error(`POST /api/scans/import: its ${String(httpPart)} schema needs a validator`);
        return (data: unknown) => Buffer.isBuffer(data);
      },
      schema: {
        tags: ['scans'],
        summary: 'Import an nmap XML report as a completed scan',
        description: DESCRIPTION,
        consumes: XML_TYPES,
        body: {
          type: 'string',
          description: 'The nmap XML report (`nmap -oX FILE …`), at most 50 MiB',
        },
        response: {
          201: ScanRecord,
          ...errorResponses(400, 401, 403, 409),
          413: { ...errorResponses(413)[413], description: 'Report larger than 50 MiB' },
          415: { ...errorResponses(415)[415], description: 'Content-Type is not application/xml or text/xml' },
        },
      },
    },
    async (request, reply) => {
      const report = request.body as Buffer;
      const bytes = report.byteLength;
      // The bytes may be handed to the thread that reads them: not used after this.
      const thread = threads.get(request) ?? null;
      threads.delete(request);
      const plan = await readNmapReport(report, WORKER_THRESHOLD_BYTES, thread);
      const scan = await scans.importReport(plan, { actor: scanRequesterOf(request).actor, bytes });
      return reply.code(201).send(toScanRecord(scan));
    },
  );
};
