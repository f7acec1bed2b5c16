import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

/*
 * The child processes of the benches that start a loader and a service of their own
 * (bench:sql, bench:export): each runs a TypeScript entry point under tsx, and the parent reads
 * what it prints and how much memory it holds.
 */

/** Runs `node --import tsx <args>`, its stdout piped to the parent (read it with `output`), stderr inherited. */
export function runTsx(args: string[], env: NodeJS.ProcessEnv, cwd = process.cwd()): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', ...args], { env, cwd, stdio: ['ignore', 'pipe', 'inherit'] });
}

/** The first match of `pattern` in what the child prints; rejects if it exits before printing it. */
export async function output(child: ChildProcess, pattern: RegExp): Promise<RegExpExecArray> {
  let text = '';
  return new Promise((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
      const match = pattern.exec(text);
      if (match) resolve(match);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code} before ${pattern}: ${text.slice(-2000)}`)));
  });
}

/** Resident memory of a process, in MB (VmRSS of /proc/<pid>/status). */
export function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) / 1024;
}
