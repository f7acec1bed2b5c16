/**
 * The layers of src/ (docs/architecture.md), checked by `npm run lint` in CI:
 *   core  <-  oltp, olap (the stores)  <-  ingest  <-  workers  <-  api  <-  runtime  <-  entry points
 * A layer imports only layers below it; the API reaches workers only through their enqueue entry
 * points and the ingestion path only through its sink interface; the two ingestion modes (log,
 * queue), the concerns of src/olap and the resource folders of src/api stay apart; no file imports itself again through others,
 * type-only imports included.
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
      to: { path: '^src/(api|oltp|olap|ingest|workers|runtime)/' },
    },
    {
      name: 'stores-import-no-ingest-api-or-workers',
      comment: 'The stores (src/oltp, src/olap) own their rows and queries; they know nothing of HTTP, queues or the ingestion path.',
      severity: 'error',
      from: { path: '^src/(oltp|olap)/' },
      to: { path: '^src/(api|ingest|workers|runtime)/' },
    },
    {
      name: 'olap-concerns-apart',
      comment:
        'Each concern of src/olap (tables/, metrics/, readonly/, data-rights/) uses only itself and the shared root (the client, migrations, mutations, time).',
      severity: 'error',
      from: { path: '^src/olap/([^/]+)/' },
      to: { path: '^src/olap/[^/]+/', pathNot: '^src/olap/$1/' },
    },
    {
      name: 'ingest-imports-no-workers-or-api',
      comment: 'The ingestion path runs inside the API process (the log) and the worker process (the queue): it imports neither.',
      severity: 'error',
      from: { path: '^src/ingest/' },
      to: { path: '^src/(api|workers|runtime)/' },
    },
    {
      name: 'ingest-modes-apart',
      comment: 'The durable log (ingest/log) and the BullMQ queue (ingest/queue) are two modes: neither imports the other.',
      severity: 'error',
      from: { path: '^src/ingest/(log|queue)/' },
      to: { path: '^src/ingest/(log|queue)/', pathNot: '^src/ingest/$1/' },
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
      comment: 'The API hands work to workers only through their enqueue entry points (*.queue.ts), never their internals.',
      severity: 'error',
      from: { path: '^src/api/' },
      to: { path: '^src/workers/', pathNot: '^src/workers/.+[.]queue[.]ts$' },
    },
    {
      name: 'api-reaches-ingest-through-the-sink',
      comment: 'The API submits events to the sink interface (ingest/event-sink.ts); which sink runs is the composition root’s choice.',
      severity: 'error',
      from: { path: '^src/api/' },
      to: { path: '^src/ingest/', pathNot: '^src/ingest/event-sink[.]ts$' },
    },
    {
      name: 'api-resources-apart',
      comment:
        'A resource folder of src/api (feedback/, projects/, insights/, …) imports only itself, the files of src/api itself and the shared folders below every resource: shared/ (the description kit, shared presenters, response and request schemas), middleware/, cors/ and live/. A piece two resources use moves down into shared/.',
      severity: 'error',
      from: { path: '^src/api/([^/]+)/', pathNot: '^src/api/(shared|middleware|cors|live)/' },
      to: { path: '^src/api/[^/]+/', pathNot: '^src/api/($1|shared|middleware|cors|live)/' },
    },
    {
      name: 'api-shared-folders-import-no-resource',
      comment: 'The folders every resource uses (shared/, middleware/, cors/, live/) sit below the resources: they import none.',
      severity: 'error',
      from: { path: '^src/api/(shared|middleware|cors|live)/' },
      to: { path: '^src/api/[^/]+/', pathNot: '^src/api/(shared|middleware|cors|live)/' },
    },
    {
      name: 'only-entry-points-use-the-composition-root',
      comment: 'src/runtime wires every part together; only the process entry points (src/*.ts) import it.',
      severity: 'error',
      from: { path: '^src/(api|oltp|olap|ingest|workers|core)/' },
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
