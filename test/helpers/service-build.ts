import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The service's sources as JavaScript, for the processes the tests spawn. `npm start` runs
 * `node --import tsx src/main.ts`: tsx transforms each module with esbuild inside Node's loader
 * hooks, on a thread of their own, and that costs each start about 4 s of CPU on CI's machine
 * (measured 2026-12-02: `PORT=abc` took 3.7–4.9 s to exit with tsx, 2.2 s from this build). The
 * suite starts the service dozens of times, so it transforms the sources once, with the same
 * esbuild, before the run, and spawns `node` on the output. One test still starts it exactly as
 * `npm start` does (test/runtime/startup.test.ts, the embedded quick start).
 *
 * The output sits one level below the repository like `src`, so the paths the sources resolve from
 * their own URL (`../../sql/postgres/`, `../../../web/dist`) name the same files.
 */
export const SERVICE_BUILD_DIR = path.join(REPO_ROOT, '.test-dist');

async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile() && entry.name.endsWith('.ts')).map((entry) => path.join(entry.parentPath, entry.name));
}

/**
 * Transforms every module of src/ into SERVICE_BUILD_DIR (about half a second), over what was
 * there: not removed first, so a second run in the same checkout never finds it missing (a module
 * since deleted from src/ stays behind, imported by nothing).
 */
export async function buildService(): Promise<void> {
  await build({
    entryPoints: await sources(path.join(REPO_ROOT, 'src')),
    outbase: path.join(REPO_ROOT, 'src'),
    outdir: SERVICE_BUILD_DIR,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    logLevel: 'warning',
  });
}

/**
 * The node arguments that run `src/<name>.ts` from the build, stack traces mapped to the sources;
 * undefined (run it with tsx) for other scripts, or for every one with TEST_SERVICE_LOADER=tsx.
 */
export function builtScriptArgs(script: string): string[] | undefined {
  if (process.env.TEST_SERVICE_LOADER === 'tsx') return undefined;
  const match = /^src\/(.+)\.ts$/.exec(script);
  if (!match) return undefined;
  return ['--enable-source-maps', path.join(SERVICE_BUILD_DIR, `${match[1]}.js`)];
}
