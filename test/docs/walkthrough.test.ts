import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../../src/core/net.js';
import { makeDataDir, type ServiceProcess, serviceEnv, spawnScript } from '../helpers/process.js';
import { createDatabase } from '../helpers/service.js';
import { type CodeBlock, isWalkThrough, SHELL_LANGS, testedBlocks } from './code-blocks.js';

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
/** Other spellings of the service's address in the documents (the SDK's examples use a public one). */
const DOCUMENTED_HOSTS = [DOCUMENTED_BASE, 'http://localhost:3000', 'https://feedback.example.com'];
/** The project API key as the documents' TypeScript shows it; replaced by the walk-through's `$KEY`. */
const DOCUMENTED_KEY = "'fbk_…'";
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

/**
 * One curl of the guide and what the guide says of it: `"field":value` pairs, grouped when the
 * comment shows them inside one `{…}` (they must then be found together, in one object).
 */
type DocumentedCurl = { command: string; status?: number; fields: Array<Array<[string, unknown]>> };

const FIELD = /"(\w+)":(-?\d+(?:\.\d+)?|true|false|null|"[^"…<]*")(?=[,}\s]|$)/g;

/** A field the document shows without a comparable value (`"id":"…"`, `"events":[…]`): it must be there. */
const PRESENT = Symbol('present');

/**
 * The `"field":value` pairs of a comment, those of each innermost `{…}` together, with the fields
 * of that object shown without a comparable value (which must be present in the same object).
 */
function fieldGroups(comment: string): Array<Array<[string, unknown]>> {
  const pairs = (text: string) => [...text.matchAll(FIELD)].map((m) => [m[1] as string, JSON.parse(m[2] as string)] as [string, unknown]);
  const groups: Array<Array<[string, unknown]>> = [];
  const rest = comment.replace(/\{[^{}]*\}/g, (object) => {
    const found = pairs(object);
    const keys = new Set(found.map(([key]) => key));
    for (const [, key] of object.matchAll(/"(\w+)":/g)) if (!keys.has(key as string)) found.push([key as string, PRESENT]);
    if (found.length > 0) groups.push(found);
    return '';
  });
  for (const pair of pairs(rest)) groups.push([pair]);
  return groups;
}

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
    last.fields.push(...fieldGroups(comment));
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

/** Every object anywhere in a JSON value (the value itself included). */
function objectsOf(value: unknown): Array<Record<string, unknown>> {
  if (Array.isArray(value)) return value.flatMap(objectsOf);
  if (value && typeof value === 'object') return [value as Record<string, unknown>, ...Object.values(value).flatMap(objectsOf)];
  return [];
}

/** Whether one object of the answer has every pair of the group. */
function hasGroup(body: unknown, group: Array<[string, unknown]>): boolean {
  return objectsOf(body).some((object) =>
    group.every(([key, value]) => key in object && (value === PRESENT || JSON.stringify(object[key]) === JSON.stringify(value))),
  );
}

/** The shell variables some lines assign (comments left out). */
function assignedVariables(code: string): string[] {
  const uncommented = code.replace(/(^|\s)#.*$/gm, '');
  return [...new Set([...uncommented.matchAll(/(?:^|[\s;(])([A-Z_][A-Z0-9_]*)=/gm)].map((m) => m[1] as string))];
}

/** A shell function in front of the real curl: each call dumps its headers and body under `<dir>/<n>` and tags its request. */
function curlRecorder(dir: string, tag: string): string[] {
  return [
    `mkdir -p ${dir} && echo 0 > ${dir}/count`,
    'curl() {',
    `  local n; n=$(( $(cat ${dir}/count) + 1 )); echo "$n" > ${dir}/count`,
    `  command curl -D "${dir}/$n.head" -H "X-Request-Id: ${tag}-$n" "$@" | tee "${dir}/$n.body"`,
    '}',
  ];
}

/** What differs between the curls a document shows and the answers recorded under `dir`. */
async function curlProblems(dir: string, expected: DocumentedCurl[], where: string): Promise<string[]> {
  const problems: string[] = [];
  const count = Number((await readFile(path.join(dir, 'count'), 'utf8').catch(() => '0')).trim());
  // A curl behind `||` or `&&` may not run (`[ "$NEXT" = null ] || curl …`): then the others are compared.
  const ran = count < expected.length ? expected.filter((curl) => !/(?:\|\||&&)\s*curl\s/.test(curl.command)) : expected;
  if (count !== ran.length) problems.push(`${where}: ${count} curls ran, the document shows ${expected.length}`);
  for (const [index, curl] of ran.slice(0, count).entries()) {
    const n = index + 1;
    const head = await readFile(path.join(dir, `${n}.head`), 'utf8').catch(() => 'no answer');
    const status = Number([...head.matchAll(/^HTTP\/[\d.]+ (\d{3})/gm)].at(-1)?.[1]);
    const text = await readFile(path.join(dir, `${n}.body`), 'utf8').catch(() => '');
    const wanted = curl.status ?? '2XX';
    if (curl.status ? status !== curl.status : status < 200 || status > 299) {
      problems.push(`${where} #${n} ${curl.command}\n  answered ${status}, the document says ${wanted}: ${text.slice(0, 300)}`);
      continue;
    }
    if (curl.fields.length === 0) continue;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      problems.push(`${where} #${n} ${curl.command}\n  the document shows fields, the answer is not JSON: ${text.slice(0, 300)}`);
      continue;
    }
    for (const group of curl.fields) {
      if (!hasGroup(body, group)) {
        const shown = group.map(([key, value]) => `"${key}":${value === PRESENT ? '…' : JSON.stringify(value)}`).join(',');
        problems.push(`${where} #${n} ${curl.command}\n  the document shows {${shown}} in one object, the answer is ${text.slice(0, 600)}`);
      }
    }
  }
  return problems;
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
    workDir = await makeDataDir();
    await symlink(dataDir, path.join(workDir, '.data'));
  }, 300_000); // a loaded machine: PROCESS_TEST_TIMEOUT_MS of test/helpers/process.ts

  it('runs the first start’s curl line, then every command as printed, each answering what the guide says', async () => {
    const printed = (CURL_LINE.exec(service.stdout)?.[1] ?? '').trim();
    const blocks = fences(await walkThrough()).filter((block) => block.lang === 'sh');
    expect(blocks.length).toBeGreaterThan(5);
    const guideLines = blocks.flatMap((block) => block.lines);
    const expected = documentedCurls([printed, ...guideLines]);

    // The walk-through's variables (and its `field`) are kept for the other documents' blocks.
    const variables = assignedVariables(guideLines.join('\n'));
    // Each curl's answer is recorded, so the answers can be matched to the guide's commands.
    const script = [
      'set -eu',
      ...curlRecorder('.curl', 'guide'),
      printed,
      ...guideLines,
      `{ declare -p ${variables.join(' ')}; declare -f field; } > .state.sh`,
    ]
      .join('\n')
      .replaceAll(DOCUMENTED_BASE, base)
      .replace(/^sleep (\d+)/gm, (_, seconds: string) => `sleep ${Number(seconds) * SLEEP_FACTOR}`);
    await writeFile(path.join(workDir, 'walk-through.sh'), script);
    const run = await runBash(script, workDir, 240_000);
    expect(run.code, `bash exited ${run.code}\n${run.stderr}\n${run.stdout.slice(-3000)}`).toBe(0);
    expect(run.stderr).toBe('');

    const problems = await curlProblems(path.join(workDir, '.curl'), expected, GUIDE);
    expect(problems, problems.join('\n')).toEqual([]);
    // The mail step found the emails the guide lists.
    expect(existsSync(path.join(dataDir, 'mail'))).toBe(true);
  }, 300_000);

  it('runs every other block of every document that is not marked not-runnable, each answering what it shows', async () => {
    const state = path.join(workDir, '.state.sh');
    expect(existsSync(state), 'the walk-through ran and kept its variables').toBe(true);
    const others = testedBlocks().blocks.filter((block) => !isWalkThrough(block) && block.notRunnable === undefined);
    const app = await appFolder(workDir);
    const key = (await runBash('source .state.sh && printf %s "$KEY"', workDir, 10_000)).stdout;
    const problems: string[] = [];
    for (const [index, block] of others.entries()) {
      const where = `${block.file}:${block.line}`;
      const text = DOCUMENTED_HOSTS.reduce((code, host) => code.replaceAll(host, base), block.lines.join('\n'));
      if (SHELL_LANGS.includes(block.lang)) {
        // Each block in its own bash, after the walk-through: its variables, its `field`, its folder.
        const dir = `.curl-${index}`;
        // What it sets is kept for the blocks after it, as in a reader's shell that stays open.
        const kept = assignedVariables(text);
        const keep = kept.length > 0 ? [`declare -p ${kept.join(' ')} >> .state.sh 2>/dev/null || true`] : [];
        const script = ['set -eu', 'source .state.sh', ...curlRecorder(dir, `doc-${index}`), text, ...keep].join('\n');
        const run = await runBash(script, workDir, 60_000);
        if (run.code !== 0 || run.stderr !== '') problems.push(`${where}: bash exited ${run.code}: ${run.stderr.slice(0, 500)}`);
        else problems.push(...(await curlProblems(path.join(workDir, dir), documentedCurls(block.lines), where)));
      } else {
        // README.md says its snippet runs in this repository (issue 40): from a folder of the
        // repository itself, resolved through the root's node_modules, never through `app`.
        const folder = block.file === 'README.md' ? await repositoryFolder() : app;
        try {
          problems.push(...(await runScript(block, text.replaceAll(DOCUMENTED_KEY, JSON.stringify(key)), folder, index)));
        } finally {
          if (folder !== app) await rm(folder, { recursive: true, force: true });
        }
      }
    }
    expect(problems, problems.join('\n')).toEqual([]);
  }, 240_000);
});

/** A folder of an app that installed our SDK (`@feedback/sdk` linked to sdk/, as `npm install <repo>/sdk` does). */
async function appFolder(workDir: string): Promise<string> {
  const app = path.join(workDir, 'app');
  await mkdir(path.join(app, 'node_modules', '@feedback'), { recursive: true });
  await symlink(path.join(ROOT, 'sdk'), path.join(app, 'node_modules', '@feedback', 'sdk'));
  await writeFile(path.join(app, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  return app;
}

/** A scratch folder inside the repository: a bare `@feedback/sdk` resolves through the root's node_modules. */
async function repositoryFolder(): Promise<string> {
  return mkdtemp(path.join(ROOT, '.docs-run-'));
}

/** Runs a TypeScript (through tsx) or JavaScript block as an ES module in the app folder: it must end, and exit 0. */
async function runScript(block: CodeBlock, code: string, app: string, index: number): Promise<string[]> {
  const typescript = block.lang === 'ts' || block.lang === 'typescript';
  const file = path.join(app, `block-${index}.${typescript ? 'mts' : 'mjs'}`);
  await writeFile(file, `${code}\n`);
  const loader = typescript ? ['--import', pathToFileURL(path.join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href] : [];
  const run = await new Promise<{ code: number; stderr: string }>((resolve) => {
    execFile(process.execPath, [...loader, file], { cwd: app, timeout: 60_000 }, (error, _stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stderr });
    });
  });
  return run.code === 0 ? [] : [`${block.file}:${block.line}: the ${block.lang} block exited ${run.code}: ${run.stderr.slice(0, 800)}`];
}

describe('the repository’s own install', () => {
  it('links sdk/ into node_modules as @feedback/sdk, so the README’s snippet runs from the root (issue 40)', async () => {
    // `npm install` / `npm ci` make this link (package.json's `file:sdk` devDependency).
    expect(await realpath(path.join(ROOT, 'node_modules', '@feedback', 'sdk'))).toBe(await realpath(path.join(ROOT, 'sdk')));
    const readme = testedBlocks().blocks.filter((block) => block.file === 'README.md' && block.lang === 'ts');
    expect(readme.some((block) => block.lines.some((line) => line.includes("from '@feedback/sdk'")))).toBe(true);
  });
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
