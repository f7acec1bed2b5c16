import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The widget's loader (web/loader/widget.ts) as one classic script, web/dist/widget.js: a host
 * page loads it with a plain <script async>, so no module, no chunk, no hash in its name. Built
 * after the pages (their build empties dist/).
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  build: {
    outDir: 'dist',
    emptyOutDir: false,
    lib: {
      entry: fileURLToPath(new URL('./loader/widget.ts', import.meta.url)),
      formats: ['iife'],
      name: 'FeedbackLoader',
      fileName: () => 'widget.js',
    },
    reportCompressedSize: true,
  },
});
