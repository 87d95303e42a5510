/**
 * The OpenAPI document the server serves at /openapi.json, produced without a server: the app is
 * built in-process over the services of an empty in-memory SQLite store and never listens. Used by
 * generate-api-types.mjs (loaded through Vite's module runner, so it runs from the TypeScript
 * sources, with or without a dist/) and by the test that type-checks the web UI against it.
 */
import { buildApp } from '../src/api/app.js';
import { createLogger } from '../src/logger.js';
import { openServerServices } from '../src/services.js';

export async function openApiDocument(): Promise<Record<string, unknown>> {
  const services = await openServerServices({
    // scanAllow null: the document must not depend on NETWARDEN_SCAN_ALLOW in this environment.
    config: {
      databaseUrl: ':memory:',
      dataDir: null,
      scanAllow: null,
      outboundAllow: null,
      nmap: { binary: 'nmap', dataDir: null },
      settingsSeed: {},
      admin: null,
    },
    logger: createLogger('silent'),
    background: false,
  });
  try {
    const app = await buildApp({ services, logger: false });
    try {
      await app.ready();
      return app.swagger() as unknown as Record<string, unknown>;
    } finally {
      await app.close();
    }
  } finally {
    await services.close();
  }
}
