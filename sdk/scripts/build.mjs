// Builds the SDK into sdk/dist: types generated from the OpenAPI document, ESM and CommonJS
// bundles of each entry point (esbuild), the minified browser bundles (ESM, and an IIFE for a
// plain <script> tag: window.FeedbackSDK), and the .d.ts files (tsc). Run by the root's
// `npm run build:sdk`, which `npm install` runs through prepare. About two seconds.
import { spawnSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const sdk = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const root = path.join(sdk, '..');

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status ?? result.signal})`);
}

run(process.execPath, ['--import', 'tsx', 'sdk/scripts/generate-api-types.ts']);
await rm(path.join(sdk, 'dist'), { recursive: true, force: true });

const entries = ['index', 'node', 'react-native'];
const common = { bundle: true, target: 'es2020', logLevel: 'warning', absWorkingDir: sdk };
await Promise.all([
  ...entries.flatMap((entry) => [
    build({
      ...common,
      entryPoints: [`src/${entry}.ts`],
      outfile: `dist/${entry}.js`,
      format: 'esm',
      platform: entry === 'node' ? 'node' : 'neutral',
    }),
    build({
      ...common,
      entryPoints: [`src/${entry}.ts`],
      outfile: `dist/${entry}.cjs`,
      format: 'cjs',
      platform: entry === 'node' ? 'node' : 'neutral',
    }),
  ]),
  build({ ...common, entryPoints: ['src/index.ts'], outfile: 'dist/browser.min.js', format: 'esm', platform: 'browser', minify: true }),
  build({
    ...common,
    entryPoints: ['src/index.ts'],
    outfile: 'dist/feedback.iife.min.js',
    format: 'iife',
    globalName: 'FeedbackSDK',
    platform: 'browser',
    minify: true,
  }),
]);
run(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'sdk/tsconfig.json']);
console.log('sdk: built sdk/dist');
