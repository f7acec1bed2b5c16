// `npm install` / `npm ci` run this (root package.json "prepare"), so a fresh clone has the built
// SDK (sdk/dist) that the tests and the browser page load. An install without devDependencies
// (`--omit=dev`, as in the production image) has no build tools: that is said, not an error.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
try {
  require.resolve('esbuild/package.json');
} catch {
  console.log('sdk: build tools not installed (devDependencies omitted); skipping `npm run build:sdk`.');
  process.exit(0);
}
const result = spawnSync('npm', ['run', '--silent', 'build:sdk'], { stdio: 'inherit' });
process.exit(result.status ?? 1);
