// Server side of the HTTP benchmark: run by bench/http-bench.mjs with child_process.fork(), so the
// server and autocannon (in the parent) each have their own process and event loop.
//
// Configuration arrives as JSON in BENCH_CHILD_CONFIG:
//   { mode: 'bare' }                                     a bare Fastify route, GET /bare
//   { mode: 'app', url, pgSchema?, devices, seed,        the real Netwarden app over a seeded store
//     inventory?, portsPerHost?, dist? }                 inventory 'seed' (bench/inventory.mjs, default) or
//                                                        'import': `devices` hosts imported from a generated nmap
//                                                        report (bench/nmap-report.mjs), then its 5 %-drift re-import;
//                                                        dist: the build's dist/ as a file URL (default ../dist/)
//
// stdout is the log destination (the parent points it at a file), so everything else goes over IPC:
//   child → parent  { type: 'ready', port, ... }  |  { type: 'error', message }  |  { type: 'rss', ... }
//   parent → child  { type: 'rss' }  |  { type: 'cpu' }  |  { type: 'stop' }
//                   { type: 'profile-start' } / { type: 'profile-stop', file }: a CPU profile of that window
import { readFileSync } from 'node:fs';
import { seedInventory } from './inventory.mjs';
import { openBenchApp } from './app.mjs';
import { reportPair } from './nmap-report.mjs';

// Scope guard: servers started by benchmarks may scan only loopback and the namespace lab.
process.env.NETWARDEN_SCAN_ALLOW ??= '127.0.0.0/8,10.66.0.0/24';

const config = JSON.parse(process.env.BENCH_CHILD_CONFIG ?? '{}');
const MB = 1024 * 1024;

function send(message) {
  if (process.send) process.send(message);
}

function memory() {
  return {
    rssMB: round(process.memoryUsage().rss / MB),
    // resourceUsage().maxRSS is in kilobytes.
    maxRssMB: round(process.resourceUsage().maxRSS / 1024),
    vmHwmMB: vmHwmMB(),
  };
}

/** Peak resident set size as the kernel reports it (Linux only). */
function vmHwmMB() {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

function round(n, digits = 1) {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

// ---------------------------------------------------------------------------------------------

async function startBare() {
  const { default: Fastify } = await import('fastify');
  const app = Fastify();
  app.get('/bare', async () => ({ status: 'ok' }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, port: app.server.address().port, close: () => app.close(), info: {} };
}

async function startNetwarden() {
  const dist = new URL(config.dist ?? '../dist/', import.meta.url);
  const { openStore } = await import(new URL('store/index.js', dist));
  const { createLogger } = await import(new URL('logger.js', dist));
  const { initialise } = await import(new URL('services.js', dist));
  const { generateApiKey } = await import(new URL('auth/tokens.js', dist));
  const { hashPassword } = await import(new URL('auth/passwords.js', dist));
  const { VERSION } = await import(new URL('version.js', dist));

  // The production logger, at the production default level; stdout is a file the parent chose.
  const logger = createLogger('info');
  const store = await openStore({ url: config.url, ...(config.pgSchema ? { pgSchema: config.pgSchema } : {}) });
  try {
    await initialise(store, { settingsSeed: {}, admin: null }, logger);
    const seeded = config.inventory === 'import' ? { devices: 0, ports: 0, ms: 0 } : await seedInventory(store, config.devices, config.seed);

    // An API key row exactly as POST /api/keys stores it, created by a user as a session would be.
    const user = await store.users.create('bench-admin', await hashPassword('bench-password-not-secret'));
    const { key, prefix, hash } = generateApiKey();
    const row = await store.apiKeys.create({
      name: 'bench',
      prefix,
      key_hash: hash,
      created_by: user.id,
      created_at: new Date().toISOString(),
      expires_at: null,
    });
    await store.audit.write({
      action: 'api_key_created',
      actor: user.username,
      actorType: 'user',
      resourceType: 'api_key',
      resourceId: row.id,
      details: { name: row.name, prefix, expires_at: null },
      ipAddress: '127.0.0.1',
      userAgent: 'netwarden-bench',
      success: true,
    });

    // Collect the seeding garbage now (the parent starts this process with --expose-gc) so that
    // the first measured target does not pay for it.
    globalThis.gc?.();
    const afterSeed = memory();
    const { app, close, services } = await openBenchApp(dist, { store, logger, version: VERSION });
    if (config.inventory === 'import') {
      // The inventory as a user gets it: a generated report imported, then its drifted re-import.
      const { planImport } = await import(new URL('core/nmap-import.js', dist));
      const t0 = performance.now();
      const pair = reportPair({ hosts: config.devices, portsPerHost: config.portsPerHost ?? 8 });
      for (const xml of [pair.first, pair.second]) {
        await services.scans.importReport(planImport(xml), { actor: { name: 'bench', type: 'user' }, bytes: Buffer.byteLength(xml) });
      }
      seeded.ms = Math.round(performance.now() - t0);
      seeded.devices = Number(
        (
          await store.db
            .selectFrom('devices')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
      seeded.ports = Number(
        (
          await store.db
            .selectFrom('ports')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
      globalThis.gc?.();
    }
    await app.listen({ port: 0, host: '127.0.0.1' });
    return {
      app,
      port: app.server.address().port,
      key,
      info: { database: store.handle.description, seeded, afterSeed },
      close: async () => {
        await close();
        await store.close();
      },
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}

/** A V8 CPU profile of a window the parent chooses (one measured target), through the inspector. */
const profiler = {
  session: null,
  async start() {
    const { Session } = await import('node:inspector/promises');
    this.session = new Session();
    this.session.connect();
    await this.session.post('Profiler.enable');
    await this.session.post('Profiler.setSamplingInterval', { interval: 100 });
    await this.session.post('Profiler.start');
  },
  async stop(file) {
    const { profile } = await this.session.post('Profiler.stop');
    this.session.disconnect();
    this.session = null;
    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, JSON.stringify(profile));
  },
};

async function main() {
  const server = config.mode === 'bare' ? await startBare() : await startNetwarden();
  process.on('message', async (message) => {
    if (message?.type === 'rss') {
      send({ type: 'rss', ...memory() });
    } else if (message?.type === 'cpu') {
      send({ type: 'cpu', ...process.cpuUsage() });
    } else if (message?.type === 'profile-start') {
      await profiler.start();
      send({ type: 'profile-started' });
    } else if (message?.type === 'profile-stop') {
      await profiler.stop(message.file);
      send({ type: 'profile-stopped', file: message.file });
    } else if (message?.type === 'stop') {
      try {
        await server.close();
      } finally {
        send({ type: 'stopped', ...memory() });
        process.disconnect?.();
        // Give stdout (the log file) a moment to flush, then leave even if a handle lingers.
        setTimeout(() => process.exit(0), 100).unref();
      }
    }
  });
  // Orphaned (the parent died): do not keep serving.
  process.on('disconnect', () => setTimeout(() => process.exit(0), 1000).unref());
  send({ type: 'ready', port: server.port, key: server.key ?? null, pid: process.pid, ...server.info });
}

main().catch((err) => {
  send({ type: 'error', message: err?.stack ?? String(err) });
  process.exitCode = 1;
  setTimeout(() => process.exit(1), 100).unref();
});
