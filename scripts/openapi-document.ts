/**
 * The OpenAPI document the server serves at /openapi.json, produced without a server: the app is
 * built in-process over an empty in-memory SQLite store and never listens. Used by
 * generate-api-types.mjs (loaded through Vite's module runner, so it runs from the TypeScript
 * sources, with or without a dist/) and by the test that type-checks the web UI against it.
 */
import { buildApp } from '../src/api/app.js';
import { openStore } from '../src/store/index.js';
import { VERSION } from '../src/version.js';

export async function openApiDocument(): Promise<Record<string, unknown>> {
  const store = await openStore({ url: ':memory:' });
  try {
    // scanAllow null: the document must not depend on NETWARDEN_SCAN_ALLOW in this environment.
    const app = await buildApp({ store, version: VERSION, logger: false, scanAllow: null });
    try {
      await app.ready();
      return app.swagger() as unknown as Record<string, unknown>;
    } finally {
      await app.close();
    }
  } finally {
    await store.close();
  }
}
