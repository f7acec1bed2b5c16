import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../../src/core/net.js';
import { makeDataDir, removeDataDirs, type ServiceProcess, serviceEnv, spawnScript, stopAll } from '../helpers/process.js';
import { createDatabase } from '../helpers/service.js';

/*
 * The documented walk-through, run as a newcomer runs it (issue 20): a service started like
 * `npm start` on a fresh DATA_DIR (its operator token generated), the curl line the first start
 * prints, then every shell block of docs/api-guide.md's walk-through, in order, in one bash.
 * Each curl is checked against what the guide says of it: the 4XX its comment names, otherwise a
 * 2XX, and every `"field":value` its comment shows (a number, a boolean, or a string without `…`).
 * Other docs' commands are checked for variables they never set.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const GUIDE = 'docs/api-guide.md';
const DOCUMENTED_BASE = 'http://127.0.0.1:3000';
/**
 * The guide's pauses (`sleep 1` for the background workers, `sleep 2` for event visibility) are
 * meant for an idle laptop; on the shared 2-core CI machine each is made this many times longer.
 */
const SLEEP_FACTOR = 3;
const CURL_LINE = /^\s*(curl -s -X POST http:\/\/127\.0\.0\.1:\d+\/api\/v1\/admin\/accounts .*)$/m;

type Fence = { lang: string; lines: string[] };

/** The fenced code blocks of a markdown text (or of the part between two headings). */
function fences(markdown: string): Fence[] {
  const blocks: Fence[] = [];
  let current: Fence | undefined;
  for (const line of markdown.split('\n')) {
    const marker = /^```(\w*)\s*$/.exec(line);
    if (marker && !current) current = { lang: marker[1] ?? '', lines: [] };
    else if (marker && current) {
      blocks.push(current);
      current = undefined;
    } else current?.lines.push(line);
  }
  return blocks;
}

/** The text of the guide's walk-through section. */
async function walkThrough(): Promise<string> {
  const guide = await readFile(path.join(ROOT, GUIDE), 'utf8');
  const start = guide.indexOf('\n## Walk-through');
  const end = guide.indexOf('\n## ', start + 1);
  expect(start, 'the guide has a Walk-through section').toBeGreaterThan(0);
  return guide.slice(start, end);
}

/** One curl of the guide and what the guide says of it. */
type DocumentedCurl = { command: string; status?: number; fields: Array<[string, unknown]> };

/**
 * The curls of some shell lines, in order, each with the comments that follow it: the comment on
 * its own (logical) line and the comment-only lines after it.
 */
function documentedCurls(lines: string[]): DocumentedCurl[] {
  const curls: DocumentedCurl[] = [];
  let logical = '';
  const attach = (comment: string) => {
    const last = curls.at(-1);
    if (!last) return;
    const status = /(?:^|[\s(])(4\d\d)(?=[\s):]|$)/.exec(comment)?.[1];
    if (status && last.status === undefined) last.status = Number(status);
    for (const match of comment.matchAll(/"(\w+)":(-?\d+(?:\.\d+)?|true|false|null|"[^"…<]*")(?=[,}\s]|$)/g)) {
      last.fields.push([match[1] as string, JSON.parse(match[2] as string)]);
    }
  };
  for (const line of lines) {
    if (/^\s*#/.test(line) && !logical) {
      attach(line.replace(/^\s*#/, ''));
      continue;
    }
    logical += `${line.replace(/\\$/, '')}\n`;
    if (line.endsWith('\\')) continue;
    // A comment starts at ` #` outside quotes; the guide's commands keep `#` out of their strings.
    const hash = logical.search(/\s#\s/);
    const code = hash >= 0 ? logical.slice(0, hash) : logical;
    for (const _ of code.matchAll(/(?:^|[\s($|])curl\s/g)) curls.push({ command: code.trim(), fields: [] });
    if (hash >= 0) attach(logical.slice(hash + 2));
    logical = '';
  }
  return curls;
}

/** Every value of `key` anywhere in a JSON value. */
function valuesOf(value: unknown, key: string): unknown[] {
  if (Array.isArray(value)) return value.flatMap((item) => valuesOf(item, key));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => [...(k === key ? [v] : []), ...valuesOf(v, key)]);
  }
  return [];
}

function runBash(script: string, cwd: string, timeoutMs: number): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', script], { cwd, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe(`the walk-through of ${GUIDE}, command by command, on a freshly started service`, () => {
  let service: ServiceProcess;
  let base: string;
  let dataDir: string;
  let workDir: string;

  beforeAll(async () => {
    const port = await findFreePort();
    base = `http://127.0.0.1:${port}`;
    dataDir = await makeDataDir();
    // As `npm start` on a fresh machine, the operator token generated; the test database stands in
    // for the embedded PostgreSQL (startup.test.ts covers that one).
    const env = serviceEnv({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: await createDatabase() });
    service = spawnScript('src/main.ts', env);
    await service.waitForStdout(CURL_LINE, 60_000);
    // The guide runs "from the repository's folder", where the data directory is `.data`.
    workDir = await mkdtemp(path.join(tmpdir(), 'feedback-guide-'));
    await symlink(dataDir, path.join(workDir, '.data'));
  }, 300_000); // a loaded machine: PROCESS_TEST_TIMEOUT_MS of test/helpers/process.ts

  afterAll(async () => {
    await stopAll();
    await removeDataDirs();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('runs the first start’s curl line, then every command as printed, each answering what the guide says', async () => {
    const printed = (CURL_LINE.exec(service.stdout)?.[1] ?? '').trim();
    const blocks = fences(await walkThrough()).filter((block) => block.lang === 'sh');
    expect(blocks.length).toBeGreaterThan(5);
    const guideLines = blocks.flatMap((block) => block.lines);
    const expected = documentedCurls([printed, ...guideLines]);

    // Each curl (a shell function in front of the real one) dumps its headers and body under
    // `.curl/<n>` and tags its request, so the answers can be matched to the guide's commands.
    const script = [
      'set -eu',
      'mkdir -p .curl && echo 0 > .curl/count',
      'curl() {',
      '  local n; n=$(( $(cat .curl/count) + 1 )); echo "$n" > .curl/count',
      '  command curl -D ".curl/$n.head" -H "X-Request-Id: guide-$n" "$@" | tee ".curl/$n.body"',
      '}',
      printed,
      ...guideLines,
    ]
      .join('\n')
      .replaceAll(DOCUMENTED_BASE, base)
      .replace(/^sleep (\d+)/gm, (_, seconds: string) => `sleep ${Number(seconds) * SLEEP_FACTOR}`);
    await writeFile(path.join(workDir, 'walk-through.sh'), script);
    const run = await runBash(script, workDir, 240_000);
    expect(run.code, `bash exited ${run.code}\n${run.stderr}\n${run.stdout.slice(-3000)}`).toBe(0);
    expect(run.stderr).toBe('');

    const count = Number((await readFile(path.join(workDir, '.curl', 'count'), 'utf8')).trim());
    expect(count, 'curls run vs curls in the guide').toBe(expected.length);
    const problems: string[] = [];
    for (const [index, curl] of expected.entries()) {
      const n = index + 1;
      const head = await readFile(path.join(workDir, '.curl', `${n}.head`), 'utf8');
      const status = Number([...head.matchAll(/^HTTP\/[\d.]+ (\d{3})/gm)].at(-1)?.[1]);
      const text = await readFile(path.join(workDir, '.curl', `${n}.body`), 'utf8');
      const wanted = curl.status ?? '2XX';
      if (curl.status ? status !== curl.status : status < 200 || status > 299) {
        problems.push(`#${n} ${curl.command}\n  answered ${status}, the guide says ${wanted}: ${text.slice(0, 300)}`);
        continue;
      }
      if (curl.fields.length === 0) continue;
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        problems.push(`#${n} ${curl.command}\n  the guide shows fields, the answer is not JSON: ${text.slice(0, 300)}`);
        continue;
      }
      for (const [key, value] of curl.fields) {
        const found = valuesOf(body, key);
        if (!found.some((candidate) => JSON.stringify(candidate) === JSON.stringify(value))) {
          problems.push(
            `#${n} ${curl.command}\n  the guide shows "${key}":${JSON.stringify(value)}, the answer has ${JSON.stringify(found)}`,
          );
        }
      }
    }
    expect(problems, problems.join('\n')).toEqual([]);
    // The mail step found the emails the guide lists.
    expect(existsSync(path.join(dataDir, 'mail'))).toBe(true);
  }, 300_000);
});

describe('the commands of every other document', () => {
  /** Variables the walk-through sets (a reader of another document is told to run it first). */
  const WALK_THROUGH_VARIABLES = ['B', 'OP', 'R', 'ACCOUNT', 'ADMIN', 'PROJECT', 'KEY', 'ID', 'ID2', 'INTEGRATION', 'DELIVERY', 'MEMBER'];
  /** Set by the shell itself. */
  const SHELL_VARIABLES = ['PWD', 'HOME'];

  it('use only variables they set themselves or the walk-through sets', async () => {
    const { readdir } = await import('node:fs/promises');
    const files = [
      'README.md',
      ...(await readdir(path.join(ROOT, 'docs'))).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`),
    ];
    const problems: string[] = [];
    for (const file of files) {
      const text = await readFile(path.join(ROOT, file), 'utf8');
      const shell = fences(text)
        .filter((block) => block.lang === 'sh' || block.lang === 'bash')
        .flatMap((block) => block.lines)
        .map((line) => line.replace(/(^|\s)#.*$/, ''))
        .join('\n');
      const assigned = new Set([...shell.matchAll(/(?:^|[\s;(])(?:export\s+)?([A-Za-z_]\w*)=/g)].map((match) => match[1]));
      // `\$NAME` is expanded by another shell (inside a container): not this one's.
      for (const [, name] of shell.matchAll(/(?<!\\)\$\{?([A-Z_][A-Z0-9_]*)\b/g)) {
        const known = assigned.has(name) || WALK_THROUGH_VARIABLES.includes(name as string) || SHELL_VARIABLES.includes(name as string);
        if (!known) problems.push(`${file}: $${name} is never set`);
      }
    }
    expect([...new Set(problems)]).toEqual([]);
  });

  it('name source files that exist', async () => {
    const { readdir } = await import('node:fs/promises');
    const files = [
      'README.md',
      ...(await readdir(path.join(ROOT, 'docs'))).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`),
    ];
    const missing: string[] = [];
    for (const file of files) {
      const text = await readFile(path.join(ROOT, file), 'utf8');
      for (const [, source] of text.matchAll(/`((?:src|test|bench|scripts|web\/src)\/[\w./-]+\.(?:ts|tsx|mjs|js|sql))`/g)) {
        if (!existsSync(path.join(ROOT, source as string))) missing.push(`${file}: ${source}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
