/**
 * The layers of src/ (docs/architecture.md), checked by `npm run lint` in CI:
 *   core  <-  oltp, olap (the stores)  <-  workers  <-  api  <-  runtime  <-  entry points
 * A layer imports only layers below it; the API reaches workers only through their enqueue entry
 * points; no file imports itself again through others, type-only imports included.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'Import cycles, type-only ones included, make layers meaningless and load order fragile.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-imports-no-layer',
      comment: 'src/core is what every part uses: it imports none of them.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^src/(api|oltp|olap|workers|runtime)/' },
    },
    {
      name: 'stores-import-no-api-or-workers',
      comment: 'The stores (src/oltp, src/olap) own their rows and queries; they know nothing of HTTP or queues.',
      severity: 'error',
      from: { path: '^src/(oltp|olap)/' },
      to: { path: '^src/(api|workers|runtime)/' },
    },
    {
      name: 'workers-import-no-api',
      comment: 'Workers run without the HTTP layer (npm run worker).',
      severity: 'error',
      from: { path: '^src/workers/' },
      to: { path: '^src/(api|runtime)/' },
    },
    {
      name: 'api-reaches-workers-through-enqueue-points',
      comment: 'The API hands work to workers only through their enqueue entry points (*.queue.ts, the event sink), never their internals.',
      severity: 'error',
      from: { path: '^src/api/' },
      to: { path: '^src/workers/', pathNot: '^src/workers/.+[.]queue[.]ts$|^src/workers/ingest/event-sink[.]ts$' },
    },
    {
      name: 'only-entry-points-use-the-composition-root',
      comment: 'src/runtime wires every part together; only the process entry points (src/*.ts) import it.',
      severity: 'error',
      from: { path: '^src/(api|oltp|olap|workers|core)/' },
      to: { path: '^src/runtime/' },
    },
  ],
  options: {
    // TypeScript 7 has no JavaScript compiler API; swc parses the sources, type-only imports included.
    parser: 'swc',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|web)/' },
  },
};
