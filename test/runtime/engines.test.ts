/**
 * A clean install on the Node the README names (issue 28 §6): every package of the lock accepts
 * the oldest Node that package.json's `engines` promises, so `npm ci` on it prints no EBADENGINE.
 * npm itself only compares with the Node it runs on; this checks the promise, on any Node. (.ci/run
 * also fails when its own `npm ci` prints EBADENGINE.)
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/process.js';

type Semver = {
  minVersion(range: string): { version: string } | null;
  satisfies(version: string, range: string): boolean;
};
const semver = createRequire(import.meta.url)('semver') as Semver;

type LockEntry = { engines?: { node?: string } | string[]; os?: string[]; cpu?: string[] };
const readJson = (file: string) => JSON.parse(readFileSync(path.join(REPO_ROOT, file), 'utf8'));

describe('the Node that package.json promises', () => {
  const promised: string = readJson('package.json').engines.node;
  const oldest = semver.minVersion(promised)?.version ?? '';

  it('is at least the README’s', () => {
    expect(oldest).toMatch(/^20\.19\./);
    expect(readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8')).toContain('20.19');
  });

  it('is accepted by every package of the lock (no EBADENGINE on install)', () => {
    const lock = readJson('package-lock.json') as { packages: Record<string, LockEntry> };
    const refusing = Object.entries(lock.packages)
      .filter(([name]) => name !== '')
      .flatMap(([name, entry]) => {
        const wanted = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
        return wanted && !semver.satisfies(oldest, wanted) ? [`${name.replace(/^.*node_modules\//, '')} wants node ${wanted}`] : [];
      });
    expect(refusing).toEqual([]);
  });
});
