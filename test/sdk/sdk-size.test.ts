import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/process.js';

/*
 * The browser build's size (issue 22: at most 8 KB minified and gzipped), measured the way the
 * package is built (sdk/scripts/build.mjs: esbuild, bundled, minified, for browsers), from the
 * sources, so CI measures what the commit would ship. The metafile lists what went in: no
 * runtime dependency may sneak into the bundle.
 */

const LIMIT_BYTES = 8 * 1024;

it('the browser build is at most 8 KB minified and gzipped, with nothing from node_modules in it', async () => {
  const result = await build({
    absWorkingDir: path.join(REPO_ROOT, 'sdk'),
    entryPoints: ['src/index.ts'],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2020',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]?.contents ?? new Uint8Array();
  const gzipped = gzipSync(code, { level: 9 }).length;
  const inputs = Object.keys(result.metafile.inputs);
  expect(inputs.filter((input) => input.includes('node_modules'))).toEqual([]);
  console.info(
    `[sdk size] browser build: ${code.length} bytes minified, ${gzipped} bytes gzipped (limit ${LIMIT_BYTES}), ${inputs.length} modules`,
  );
  expect(gzipped).toBeLessThanOrEqual(LIMIT_BYTES);
});
