import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/** The API that `npm run dev:web` proxies to: a service started with `npm start` (PORT 3000). */
const apiTarget = process.env.DASHBOARD_API_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  // Preact's automatic JSX runtime (react-jsx with preact as the import source, as in tsconfig.json).
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  // No Preact hot-swap plugin: @prefresh/vite (through @prefresh/rolldown) needs Node 22.12, and
  // the service promises Node 20.19 (issue 28). `npm run dev:web` reloads the page on a change.
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    // Targets that all support module scripts natively: no polyfill, which would be an inline script.
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
    // Three pages: the dashboard, the widget's panel (iframe) and the public board; the panel and
    // the board share their components, not the dashboard's (docs/widget.md).
    rollupOptions: {
      input: {
        dashboard: fileURLToPath(new URL('./index.html', import.meta.url)),
        widget: fileURLToPath(new URL('./widget.html', import.meta.url)),
        board: fileURLToPath(new URL('./board.html', import.meta.url)),
      },
    },
  },
  server: {
    // Same origin as in production: the pages call /api/v1 on the server that serves them.
    proxy: { '/api': apiTarget, '/openapi': apiTarget, '/healthz': apiTarget },
  },
});
