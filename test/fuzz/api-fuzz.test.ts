/**
 * Property-based fuzzing of every operation the served /openapi.json describes, on each store:
 * requests with valid-ish and hostile path, query and body values, the right and wrong content
 * types, with and without credentials. Whatever is sent, the answer is never a 5xx, an error is
 * JSON `{"detail": "..."}`, and no body shows a stack trace or a source path.
 *
 * The server scans with an engine that sends no packet and reads the update feed from a closed
 * loopback port: fuzzed subnets and feed URLs are arbitrary.
 *
 * FUZZ_SEED and FUZZ_RUNS (cases per operation) override the fixed defaults for deeper runs. A
 * failure prints the exact request, and how to generate it again (FUZZ_SEED, FUZZ_PATH and the
 * operation's name for `-t`).
 */

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ZONES } from '../../src/core/settings.js';
import { testDatabases } from '../helpers/databases.js';
import { triggerScan } from '../helpers/scans.js';
import { seedInventory } from '../helpers/seed.js';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server.js';
import { CaseFailure, Credentials, Tally, describeFailure, problemsWith, send } from './harness.js';
import { FixedEngineSelector, LoopbackUpdateChecker, RecordingEngine, inertDrivers } from './inert-services.js';
import { type OpenApiDocument, operationsOf } from './openapi.js';
import { requestsFor, type RequestPlan } from './requests.js';
import { LEAK_MARKERS, type Hints } from './values.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20_260_601);
const RUNS = Number(process.env.FUZZ_RUNS ?? 80);
/** Replays one generated case (with `-t` naming its operation), as printed by a failure. */
const PATH = process.env.FUZZ_PATH;

/** Operations fuzzed while a scan runs (one that stays in discovery until cancelled). */
const WITH_RUNNING_SCAN = new Set(['POST /api/scans/{scan_id}/cancel', 'GET /api/scan/status']);
/** The running scan's target: in the lab range, and one no hint or hostile value names. */
const HELD_TARGET = '10.66.0.250/32';

/** Operations after which the harness's own session or key may be gone. */
const ENDS_CREDENTIALS = new Set(['POST /api/auth/logout', 'POST /api/auth/password', 'DELETE /api/keys/{key_id}', 'DELETE /api/agents/{agent_id}']);

function inertServer(database: Parameters<typeof startTestServer>[0], engine = new RecordingEngine()) {
  return startTestServer(database, {
    engines: new FixedEngineSelector(engine),
    updateChecker: new LoopbackUpdateChecker({ version: '0.0.0-test' }),
    notifier: { drivers: inertDrivers() },
    // An agent's long poll answers at once (a fuzzed wait_seconds would otherwise hold each case up to 25 s).
    agentPollMaxWaitMs: 0,
  });
}

/** The document as the server serves it: the operations to fuzz are read from it, not listed here. */
async function servedDocument(): Promise<OpenApiDocument> {
  const server = await inertServer(testDatabases()[0]);
  try {
    return (await (await server.request('/openapi.json')).json()) as OpenApiDocument;
  } finally {
    await server.close();
  }
}

const operations = operationsOf(await servedDocument());

/** Values that get past validation, so cases reach the handlers and the database. */
async function validValues(server: TestServer): Promise<Hints> {
  const seed = await seedInventory(server.store);
  const deviceIds = Object.values(seed.devices).map((d) => d.id);
  const scanIds = Object.values(seed.scans).map((s) => s.id);
  const allowedAddress = fc.constantFrom('127.0.0.1', '127.0.0.77', '10.66.0.5');
  return {
    device_id: fc.constantFrom(...deviceIds),
    'device_ids[]': fc.constantFrom(...deviceIds),
    scan_id: fc.constantFrom(...scanIds),
    key_id: fc.integer({ min: 1, max: 4 }),
    zone: fc.constantFrom(...DEFAULT_ZONES, ''),
    'zones[]': fc.constantFrom(...DEFAULT_ZONES, 'Lab'),
    username: fc.constant(ADMIN.username),
    password: fc.constant(ADMIN.password),
    current_password: fc.constant(ADMIN.password),
    new_password: fc.constantFrom('another long passphrase', ADMIN.password),
    name: fc.constantFrom('fuzz', 'grafana'),
    actor: fc.constant(ADMIN.username),
    q: fc.constantFrom('192.168', 'nas', '22', 'AA:BB'),
    subnet: fc.constantFrom('127.0.0.1', '127.0.0.0/30', '10.66.0.0/28', '10.66.0.9'),
    ip_address: allowedAddress,
    'exclude[]': allowedAddress,
    'trust_proxy[]': fc.constantFrom('127.0.0.1', '10.66.0.0/24'),
    port_range: fc.constantFrom('22,80,443', '1-1000', '8000-8100'),
    feed_url: fc.constant('http://127.0.0.1:9/feed'),
  };
}

function bodyText(plan: RequestPlan): string {
  if (plan.body === undefined) return '';
  return typeof plan.body === 'string' ? plan.body : Buffer.from(plan.body).toString('latin1');
}

describe.each(testDatabases())('every operation in /openapi.json, fuzzed ($kind)', (database) => {
  const engine = new RecordingEngine();
  const tally = new Tally();
  /** Operations whose every case passed: the coverage check below is about those. */
  const completed = new Set<string>();
  let server: TestServer;
  let credentials: Credentials;
  let hints: Hints;

  beforeAll(async () => {
    server = await inertServer(database, engine);
    credentials = await Credentials.create(server);
    hints = await validValues(server);
    engine.held.add(HELD_TARGET);
  });

  afterAll(async () => {
    const { cases, operations: covered, statuses } = tally.summary();
    console.log(`[fuzz] ${database.kind}: ${cases} cases over ${covered} operations (seed ${SEED}, ${RUNS} runs each); answers ${statuses}`);
    await server?.close();
  });

  /** Starts a scan that runs until cancelled; its id becomes a hint, so cases cancel it or ask about it. */
  async function startHeldScan(): Promise<{ hints: Hints; stop(): Promise<void> }> {
    await server.app.services.scans.idle();
    const started = await triggerScan(server, credentials.key, { subnet: HELD_TARGET, profile: 'quick' });
    return {
      hints: { ...hints, scan_id: fc.oneof(hints.scan_id, fc.constant(started.scan_id)) },
      async stop() {
        if (server.app.services.scans.current()?.id === started.scan_id) await server.app.services.scans.cancel(started.scan_id);
      },
    };
  }

  operations.forEach((operation, index) => {
    it(operation.id, async () => {
      const seed = SEED + index;
      const held = WITH_RUNNING_SCAN.has(operation.id) ? await startHeldScan() : null;
      const property = fc.asyncProperty(requestsFor(operation, held?.hints ?? hints), async (plan) => {
        // A leak marker the fuzzer sent itself could come back in an echo; such a case proves nothing.
        fc.pre(!LEAK_MARKERS.some((m) => plan.url.includes(m) || bodyText(plan).includes(m)));
        const exchange = await send(server.baseUrl, plan, credentials);
        tally.count(operation.id, exchange.status);
        if (ENDS_CREDENTIALS.has(operation.id)) await credentials.repair();
        // Keeps the known password, so later login cases can still succeed.
        if (operation.id === 'POST /api/auth/password' && exchange.status === 200) await credentials.restorePassword();
        const problems = problemsWith(operation, plan, exchange);
        if (problems.length > 0) throw new CaseFailure(problems, exchange);
      });
      const run = await fc.check(property, { seed, numRuns: RUNS, path: PATH });
      await held?.stop();
      if (run.failed) {
        const reason = run.errorInstance instanceof CaseFailure ? describeFailure(run.errorInstance) : String(run.errorInstance);
        const replay = `FUZZ_SEED=${SEED} FUZZ_PATH=${run.counterexamplePath} npx vitest run test/fuzz/api-fuzz.test.ts -t '${operation.id}'`;
        expect.fail(`${operation.id} failed after ${run.numRuns} passing cases (generate it again: ${replay}):\n${reason}`);
      }
      completed.add(operation.id);
    });
  });

  it('sent every case through the inert stand-ins, and got past authentication on every operation', () => {
    for (const operation of operations.filter((o) => completed.has(o.id))) {
      expect(tally.casesOf(operation.id), operation.id).toBeGreaterThanOrEqual(RUNS);
      expect(
        tally.statusesOf(operation.id).some((s) => s !== 401),
        `${operation.id} answered only 401`,
      ).toBe(true);
    }
    // Fuzzed scan requests reached the recording engine, which is all the scan operations can reach.
    expect(engine.discovered.filter((target) => target !== HELD_TARGET).length).toBeGreaterThan(0);
  });
});
