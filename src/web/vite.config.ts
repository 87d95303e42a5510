import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// The web UI: built into dist/web/ (served by the API server at /), never committed.
// `npm run dev:web` serves it with hot reload and forwards the API to a running `npm start`.
export default defineConfig({
  root: here('.'),
  base: '/',
  publicDir: here('public'),
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: here('../../dist/web'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    // Inline scripts are blocked by the Content-Security-Policy: the preload helper stays in a file.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
  server: {
    proxy: {
      '/api': 'http://127.0.0.1:8080',
      '/health': 'http://127.0.0.1:8080',
      '/docs': 'http://127.0.0.1:8080',
      '/openapi.json': 'http://127.0.0.1:8080',
    },
  },
});
