// `npm run lint:openapi`: writes the OpenAPI document the service serves to a scratch file and
// lints it with Redocly (rules in redocly.yaml). Code generators refuse documents with errors
// such as a `nullable` without a `type`, and every rule is an error (recommended-strict): any problem fails, and .ci/run with it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openApiYaml } from '../src/api/openapi/document.js';

const dir = mkdtempSync(path.join(tmpdir(), 'feedback-openapi-lint-'));
const file = path.join(dir, 'openapi.yaml');
try {
  writeFileSync(file, openApiYaml());
  execFileSync('redocly', ['lint', file, '--config', path.resolve('redocly.yaml'), '--max-problems', '50'], { stdio: 'inherit' });
} catch (error) {
  process.exitCode = (error as { status?: number }).status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
