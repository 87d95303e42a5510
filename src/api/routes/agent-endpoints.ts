import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AGENT_POLL_WAIT_SECONDS, AGENT_UPLOAD_MAX_BYTES } from '../../core/limits.js';
import { networkContains, parseIpv4Network } from '../../core/net.js';
import { ForeignMacs, checkUploadedHost, type UploadedHost } from '../../core/scan-input.js';
import { AgentEnd, AgentJob, AgentPoll, AgentProgressAnswer, AgentProgressReport, AgentUpload } from '../../schemas/agent.js';
import { ScanRecord } from '../../schemas/scan.js';
import { UploadInProgressError } from '../../scan/errors.js';
import type { ScanRow } from '../../store/schema.js';
import { toScanRecord } from '../../store/scans.js';
import { agentOf } from '../auth.js';
import { UploadValidator } from '../upload-validation.js';
import { checkJsonTextForNul, createValidatorCompiler } from '../validation.js';
import { parseJsonYielding } from '../../util/parse-json.js';
import { HttpError, badRequest, conflict, notAuthenticated, notFound } from '../errors.js';
import { Id, errorBody, errorResponses } from '../schemas.js';

/** How often a waiting poll looks for a claimable scan besides when an event says one may be (another process queued it). */
const POLL_RECHECK_MS = 2000;
/** last_seen_at is written at most this often by progress reports and uploads (every poll writes it). */
const TOUCH_EVERY_MS = 5000;
/** What a client told to retry an upload being recorded elsewhere waits (Retry-After). */
const UPLOAD_RETRY_AFTER_SECONDS = 5;

const security = [{ agentToken: [] }];
const ScanParams = Type.Object({ scan_id: Id });

/**
 * The agent endpoints (CONTRACT §12): what `netwarden agent` calls, with its token and nothing
 * else (`config: { agent: true }`: api/auth.ts refuses a session or an API key here, and an agent
 * token everywhere else). The agent connects out: it long-polls for a scan of its networks, runs
 * it with its own engine, reports progress (which renews its lease and tells it of a cancel), and
 * uploads the results, which the server records as for its own scans.
 */
export const agentEndpointRoutes: FastifyPluginAsyncTypebox<{ maxWaitMs?: number }> = async (app, options) => {
  const maxWaitMs = options.maxWaitMs ?? AGENT_POLL_WAIT_SECONDS * 1000;
  const { store, scans, events } = app.services;
  const compileValidator = createValidatorCompiler();
  const uploadValidator = new UploadValidator(compileValidator);
  const lastTouch = new Map<number, number>();
  /** Waiting polls, woken when the server closes (they answer 204 at once). */
  const waiting = new Set<() => void>();
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    for (const wake of waiting) wake();
  });

  /** The lease owner of the scans one run of an agent takes. */
  const ownerOf = (agentId: number, runId: string) => `agent:${agentId}:${runId}`;

  const touch = async (agentId: number, force = false, about: Parameters<typeof store.agents.touch>[1] = {}) => {
    const now = Date.now();
    if (!force && now - (lastTouch.get(agentId) ?? 0) < TOUCH_EVERY_MS) return;
    lastTouch.set(agentId, now);
    await store.agents.touch(agentId, about);
  };

  /** The scan `scanId` if it is routed to this agent; 404 otherwise (another agent's scans are not named). */
  const scanOf = async (agentId: number, scanId: number): Promise<ScanRow> => {
    const scan = await store.scans.get(scanId);
    if (!scan || scan.agent_id !== agentId) throw notFound('Scan');
    return scan;
  };

  /**
   * 409 when the scan was cancelled or failed: its end is final (a cancel on the server is
   * authoritative), so neither results nor progress for it are taken any more.
   */
  const refuseEnded = (scan: ScanRow) => {
    if (scan.status === 'cancelled' || scan.status === 'failed') {
      throw conflict(
        'NW_SCAN_NOT_RUNNING',
        `Scan ${scan.id} has ended (${scan.status}${scan.error ? `: ${scan.error}` : ''}); stop it and send nothing more`,
        {
          scan_id: scan.id,
          status: scan.status,
        },
      );
    }
  };

  /**
   * Before an upload's body is read: 404 for a scan that is not this agent's, 409 for one that has
   * ended (cancelled or failed). A body nobody will take is refused at once, never read.
   */
  const checkBeforeBody = async (request: FastifyRequest) => {
    const agent = agentOf(request);
    const id = Number((request.params as { scan_id?: string }).scan_id);
    if (!Number.isSafeInteger(id) || id < 1) return; // The schema names the problem.
    refuseEnded(await scanOf(agent.agentId, id));
  };

  /** 409 when the scan runs under another run of this agent (a second `netwarden agent` with the same token, or one restarted since). */
  const refuseOtherRun = (scan: ScanRow, ownerId: string) => {
    if (scan.status === 'running' && scan.owner_id !== ownerId) {
      throw conflict('NW_SCAN_HELD_ELSEWHERE', `Scan ${scan.id} is run by another run of this agent; this run does not hold it`, {
        scan_id: scan.id,
      });
    }
  };

  /**
   * The upload as it is recorded (CONTRACT §14): every value within bounds (400 naming the entry),
   * hostnames cleaned, every host inside the scan's target, and no MAC that would move a device
   * from outside the target (withheld, with a warning).
   */
  const placed = async (scan: ScanRow, body: AgentUpload): Promise<AgentUpload> => {
    const hosts = await checkYielding('hosts', body.hosts);
    const ports = await checkYielding('ports', body.ports);
    checkInTarget(scan, hosts, ports);
    const target = parseIpv4Network(scan.subnet);
    if (!target.ok) return { ...body, hosts, ports };
    const macs = [...hosts, ...ports].flatMap((h) => (h.mac ? [h.mac.toUpperCase()] : []));
    const foreign = new ForeignMacs(target.value, macs.length > 0 ? await store.devices.holdersOfMacs(macs) : []);
    const placedHosts = foreign.withhold('hosts', hosts);
    const placedPorts = foreign.withhold('ports', ports);
    const warnings = [...(body.warnings ?? []), ...foreign.warnings];
    return { ...body, hosts: placedHosts, ports: placedPorts, ...(warnings.length > 0 ? { warnings } : {}) };
  };

  /** Resolves after `ms`, when an event says a scan may have become claimable, when the client goes, or when the server closes. */
  const nap = (ms: number, reply: FastifyReply): Promise<void> =>
    new Promise((resolve) => {
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        unsubscribe();
        reply.raw.off('close', finish);
        waiting.delete(finish);
        resolve();
      };
      const timer = setTimeout(finish, ms);
      const unsubscribe = events.subscribe((event) => {
        if (event.name === 'scan_queued' || event.name === 'scan_finished') finish();
      });
      reply.raw.once('close', finish);
      waiting.add(finish);
    });

  app.post(
    '/api/agent/jobs/next',
    {
      config: { agent: true },
      schema: {
        tags: ['agent'],
        security,
        summary: 'Take the next scan of this agent (long poll)',
        description:
          `Agent token only. Records the agent as heard from (status, version, host, engine), then waits up to \`wait_seconds\` (default ${AGENT_POLL_WAIT_SECONDS}) ` +
          'for a queued scan routed to this agent that may start, and answers 200 with it (now `running`, leased to this `run_id`: keep it by reporting progress at least every few seconds) or 204 when there is none. ' +
          'Scans of an agent that does not poll wait in `queued`.',
        body: AgentPoll,
        response: { 200: AgentJob, 204: Type.Null({ description: 'No scan for this agent now: poll again' }), ...errorResponses(400, 401, 413, 415) },
      },
    },
    async (request, reply) => {
      const agent = agentOf(request);
      const { run_id: runId, version, engine, engines, hostname } = request.body;
      const available = engines ?? [engine];
      await touch(agent.agentId, true, { version, engine: available.join(', '), ...(hostname !== undefined ? { hostname } : {}) });
      const deadline = Date.now() + Math.min(maxWaitMs, (request.body.wait_seconds ?? AGENT_POLL_WAIT_SECONDS) * 1000);
      for (;;) {
        if (closing || reply.raw.destroyed) return reply.code(204).send(null);
        // A read first: the claim takes the queue's lock, which an idle agent should not take every few seconds.
        const mine = (await store.scans.listActive()).some((s) => s.status === 'queued' && s.agent_id === agent.agentId);
        if (mine) {
          const job = await scans.claimForAgent({ id: agent.agentId, name: agent.agentName }, ownerOf(agent.agentId, runId));
          if (job) {
            request.log.info({ scan_id: job.scan_id, agent: agent.agentName }, 'an agent took a scan');
            return job;
          }
        }
        const left = deadline - Date.now();
        if (left <= 0) return reply.code(204).send(null);
        await nap(Math.min(left, POLL_RECHECK_MS), reply);
        // Revoked while it waited (here or on another instance): refused now, not at its next poll.
        if ((await store.agents.get(agent.agentId))?.revoked_at) throw notAuthenticated();
      }
    },
  );

  app.post(
    '/api/agent/scans/:scan_id/progress',
    {
      config: { agent: true },
      schema: {
        tags: ['agent'],
        security,
        summary: "Report a scan's progress (renews its lease)",
        description:
          'Agent token only. Keeps the progress for the API and the live events, and renews the lease of the scan (a scan not reported on for 30 s ends as `failed`). ' +
          "Answers what to do: `continue`; `cancel` (a cancel was asked: stop, and report `cancelled` to /end); `drop` (it is no longer this run's: stop without reporting). " +
          'A scan that has ended as `cancelled` or `failed` answers 409 `{"detail","code":"NW_SCAN_NOT_RUNNING","scan_id","status"}`: a cancel on the server ends an agent\'s scan at once, and nothing more is taken for it.',
        params: ScanParams,
        body: AgentProgressReport,
        response: { 200: AgentProgressAnswer, ...errorResponses(400, 401, 404, 409, 413, 415) },
      },
    },
    async (request) => {
      const agent = agentOf(request);
      refuseEnded(await scanOf(agent.agentId, request.params.scan_id));
      const state = await scans.agentProgress(request.params.scan_id, ownerOf(agent.agentId, request.body.run_id), request.body.progress);
      await touch(agent.agentId);
      return { action: state === 'ok' ? ('continue' as const) : state === 'cancel' ? ('cancel' as const) : ('drop' as const) };
    },
  );

  // The upload has a context of its own: its body is decoded as it arrives, counted against the
  // limit (413 the moment it passes it, or at once when Content-Length says so), and parsed and
  // checked in pieces with the event loop given back in between (util/parse-json.ts,
  // api/upload-validation.ts), so the instance keeps answering while a large upload comes in.
  await app.register(async (plain) => {
    const child = plain.withTypeProvider<TypeBoxTypeProvider>();
    child.addContentTypeParser(
      'application/json',
      { parseAs: 'string', bodyLimit: AGENT_UPLOAD_MAX_BYTES },
      async (request: FastifyRequest, text: string) => {
        if (text.trim() === '')
          throw new HttpError('NW_MALFORMED_BODY', 'body: Content-Type is application/json but the body is empty; send a JSON object');
        checkJsonTextForNul(request, text);
        try {
          return await parseJsonYielding(text);
        } catch (err) {
          throw new HttpError('NW_MALFORMED_BODY', `body: malformed JSON (${(err as Error).message.slice(0, 200)})`);
        }
      },
    );

    child.post(
      '/api/agent/scans/:scan_id/results',
      {
        config: { agent: true },
        bodyLimit: AGENT_UPLOAD_MAX_BYTES,
        onRequest: checkBeforeBody,
        // The body is checked against its schema in the handler, in parts (api/upload-validation.ts).
        validatorCompiler: (route) => (route.httpPart === 'body' ? () => true : compileValidator(route)),
        schema: {
          tags: ['agent'],
          security,
          summary: "Upload a scan's results (idempotent, resumable)",
          description:
            'Agent token only. Records the hosts and ports the agent found as for a scan run by the server (inventory, risk, CVEs, presence, changes) and completes the scan; answers its record. ' +
            'Safe to retry after a dropped connection: a scan already recorded answers its record again, one being recorded here waits for it, ' +
            `and one being recorded by another instance answers 409 with \`Retry-After\` (retry then). At most ${AGENT_UPLOAD_MAX_BYTES / 1024 / 1024} MiB (413 beyond it). ` +
            'A scan of another agent (404) or one that has ended as `cancelled` or `failed` (409) is refused before the body is read. ' +
            "Every host must lie in the scan's target, and every value within the limits of imported reports (addresses in dotted-quad form, ports 1–65535, " +
            'hostnames up to 253 characters, product, version and extra_info up to 256): 400 naming the entry (`ports.2.ports.0.port: …`), nothing recorded. ' +
            'Line breaks and control characters in a hostname are removed. ' +
            "A MAC that belongs to a device whose address lies outside the scan's target does not move that device: the host is recorded without the MAC, " +
            'as a device of its own, and the scan carries a warning naming the entry (`hosts.N.mac`).',
          params: ScanParams,
          body: AgentUpload,
          response: {
            200: ScanRecord,
            ...errorResponses(400, 401, 404, 409, 415),
            413: errorBody(413, `Body larger than ${AGENT_UPLOAD_MAX_BYTES / 1024 / 1024} MiB`),
          },
        },
      },
      async (request) => {
        const agent = agentOf(request);
        const scan = await scanOf(agent.agentId, request.params.scan_id);
        if (scan.status === 'completed') return toScanRecord(scan);
        refuseEnded(scan);
        const body = await uploadValidator.validate(request.body);
        const ownerId = ownerOf(agent.agentId, body.run_id);
        refuseOtherRun(scan, ownerId);
        await yieldToEventLoop();
        const upload = await placed(scan, body);
        let row: ScanRow;
        try {
          row = await scans.recordAgentResults(scan.id, ownerId, upload);
        } catch (err) {
          if (err instanceof UploadInProgressError) {
            throw new HttpError(
              err.code,
              err.message,
              { ...err.extra, retry_after_seconds: UPLOAD_RETRY_AFTER_SECONDS },
              { retryAfterSeconds: UPLOAD_RETRY_AFTER_SECONDS },
            );
          }
          throw err;
        }
        await touch(agent.agentId, true);
        return toScanRecord(row);
      },
    );
  });

  app.post(
    '/api/agent/scans/:scan_id/end',
    {
      config: { agent: true },
      schema: {
        tags: ['agent'],
        security,
        summary: 'Report that a scan ended without results',
        description:
          'Agent token only. `cancelled` after a cancel, `failed` when its engine failed or it ran out of time; `error` says why. Idempotent: a scan already ended is left as it is. Answers its record.',
        params: ScanParams,
        body: AgentEnd,
        response: { 200: ScanRecord, ...errorResponses(400, 401, 404, 409, 413, 415) },
      },
    },
    async (request) => {
      const agent = agentOf(request);
      const scan = await scanOf(agent.agentId, request.params.scan_id);
      const ownerId = ownerOf(agent.agentId, request.body.run_id);
      refuseOtherRun(scan, ownerId);
      const row = await scans.agentEnded(scan.id, ownerId, request.body.status, `Agent ${agent.agentName}: ${request.body.error}`);
      await touch(agent.agentId, true);
      return toScanRecord(row ?? scan);
    },
  );
};

/** Lets waiting I/O (other requests, /health) run before the next long piece of work. */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Ports checked between two turns of the event loop (a host may list 131,070; a 128 MiB upload about a million). */
const PORTS_CHECKED_PER_TURN = 20_000;

/** checkUploadedHost for every host of one list of an upload, giving the event loop a turn every PORTS_CHECKED_PER_TURN ports. */
async function checkYielding<H extends UploadedHost>(name: string, list: readonly H[]): Promise<H[]> {
  const checked: H[] = [];
  let sinceTurn = 0;
  for (const [i, host] of list.entries()) {
    checked.push(checkUploadedHost(name, host, i));
    sinceTurn += 1 + (host.ports?.length ?? 0);
    if (sinceTurn >= PORTS_CHECKED_PER_TURN) {
      sinceTurn = 0;
      await yieldToEventLoop();
    }
  }
  return checked;
}

/** Refuses (400, naming the entry) results for an address outside the scan's target: an agent reports only what it was asked to scan. */
function checkInTarget(scan: ScanRow, hosts: readonly { ip: string }[], ports: readonly { ip: string }[]): void {
  const parsed = parseIpv4Network(scan.subnet);
  if (!parsed.ok) return;
  const network = parsed.value;
  for (const [field, list] of [
    ['hosts', hosts],
    ['ports', ports],
  ] as const) {
    for (const [i, host] of list.entries()) {
      if (!networkContains(network, host.ip)) throw badRequest(`${field}.${i}.ip: ${host.ip} is outside the scan's target ${scan.subnet}`);
    }
  }
}
