/**
 * Serves the web UI (built by `npm run build:web` into dist/web/) at `/`. Its files are public:
 * the UI itself holds no data and talks to the authenticated API like any other client.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** dist/web/ of this package, from src/api/ (tests) and dist/api/ (the built program) alike. */
export const WEB_ROOT = fileURLToPath(new URL('../../dist/web/', import.meta.url));

/** Paths that belong to the server, never to the single-page app's client-side routes. */
const SERVER_PATHS = /^\/(api|docs|openapi\.json|health)(\/|$)/;

const NOT_BUILT =
  '<!doctype html><meta charset="utf-8"><title>Netwarden</title>' +
  '<p>The web interface has not been built. Run <code>npm run build</code> (npm ci does it) and restart the server. ' +
  'The API works meanwhile; see <a href="/docs">/docs</a>.</p>';

export interface WebUi {
  /** Answers a browser's GET for a client-side route (such as /devices/12) with the app; false when not such a request. */
  fallback(request: FastifyRequest, reply: FastifyReply): boolean;
}

export async function registerWebUi(app: FastifyInstance, root = WEB_ROOT): Promise<WebUi> {
  const indexPath = `${root}index.html`;
  const built = existsSync(indexPath);
  const index = built ? readFileSync(indexPath) : null;

  const sendIndex = (reply: FastifyReply) => {
    if (!index) return reply.code(503).type('text/html; charset=utf-8').header('Cache-Control', 'no-store').send(NOT_BUILT);
    return reply.type('text/html; charset=utf-8').header('Cache-Control', 'no-cache').send(index);
  };

  await app.register(async (web) => {
    web.addHook('onRoute', (route) => {
      route.config = { ...(route.config as object), public: true };
    });
    if (built) {
      await web.register(fastifyStatic, {
        root,
        prefix: '/',
        // One route per built file, so any other path falls through to the API's 404 handling.
        wildcard: false,
        index: false,
        serveDotFiles: false,
        cacheControl: false,
        setHeaders(res, path) {
          // Vite puts a content hash in every asset name: those never change.
          res.setHeader('Cache-Control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
        },
      });
    }
    web.get('/', { schema: { hide: true } }, async (_request, reply) => sendIndex(reply));
  });

  return {
    fallback(request, reply) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return false;
      const path = request.url.split('?')[0];
      if (SERVER_PATHS.test(path) || /\.[a-z0-9]+$/i.test(path)) return false;
      if (!(request.headers.accept ?? '').includes('text/html')) return false;
      void sendIndex(reply);
      return true;
    },
  };
}
