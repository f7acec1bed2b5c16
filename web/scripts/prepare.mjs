// `npm install` / `npm ci` run this (package.json "prepare"): it builds the dashboard, so a fresh
// clone serves it after `npm install` and `npm start`. An install without devDependencies
// (`--omit=dev`, as in the production image) has no build tools: that is said, not an error.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
try {
  require.resolve('vite/package.json');
} catch {
  console.log('dashboard: build tools not installed (devDependencies omitted); skipping `npm run build:web`.');
  process.exit(0);
}
const result = spawnSync('npm', ['run', '--silent', 'build:web'], { stdio: 'inherit' });
process.exit(result.status ?? 1);
