/**
 * Where the machine's CPU went during a phase, from /proc (Linux): the service process, the load
 * generator, PostgreSQL, Redis, and everything else on the machine. The benchmark prints it so a
 * reader can tell a slow service from a busy machine (on a shared 2-core box, "other" matters).
 */
import { execFileSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';

const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

const KERNEL_THREAD = /^(kworker|ksoftirqd|kswapd|jbd2|rcu_|kdamond|migration|kcompactd|khugepaged|watchdog|irq\/)/;

export type CpuSnapshot = { at: number; procs: Map<number, { comm: string; start: string; ticks: number }>; busy: number; total: number };

export async function cpuSnapshot(): Promise<CpuSnapshot> {
  const procs = new Map<number, { comm: string; start: string; ticks: number }>();
  const entries = await readdir('/proc').catch(() => [] as string[]);
  await Promise.all(
    entries
      .filter((name) => /^\d+$/.test(name))
      .map(async (name) => {
        const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => undefined);
        if (!stat) return;
        const open = stat.indexOf('(');
        const close = stat.lastIndexOf(')');
        const fields = stat.slice(close + 2).split(' ');
        // after "(comm) ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
        // ... starttime is the 20th. Kernel workers rename themselves, so a process is its pid and start.
        procs.set(Number(name), {
          comm: stat.slice(open + 1, close),
          start: fields[19] ?? '',
          ticks: Number(fields[11]) + Number(fields[12]),
        });
      }),
  );
  const line = (await readFile('/proc/stat', 'utf8').catch(() => 'cpu 0 0 0 0')).split('\n')[0] ?? '';
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { at: performance.now(), procs, busy: total - idle, total };
}

/** Shares of one core (1.0 = one core busy for the whole phase). */
export type CpuBreakdown = {
  service: number;
  loadGenerator: number;
  postgres: number;
  redis: number;
  /** User-space processes of anyone else (other sessions' tests, for one). */
  other: number;
  /**
   * The rest of what the machine was busy with: kernel threads and interrupts (loopback network,
   * page writeback of chDB's files, so partly on our behalf) and processes that ended meanwhile.
   */
  kernel: number;
  /** Busy share of the whole machine, in cores (at most os.cpus().length). */
  machine: number;
  /** The busiest "other" processes, for the log. */
  topOther: string[];
};

export function cpuBetween(a: CpuSnapshot, b: CpuSnapshot, roles: { service: number[]; loadGenerator: number[] }): CpuBreakdown {
  const seconds = (b.at - a.at) / 1000;
  const share = (ticks: number) => ticks / TICKS_PER_SECOND / seconds;
  const out = { service: 0, loadGenerator: 0, postgres: 0, redis: 0, other: 0 };
  const others = new Map<string, number>();
  for (const [pid, proc] of b.procs) {
    const before = a.procs.get(pid);
    const ticks = proc.ticks - (before && before.start === proc.start ? before.ticks : 0);
    if (ticks <= 0) continue;
    if (roles.service.includes(pid)) out.service += ticks;
    else if (roles.loadGenerator.includes(pid)) out.loadGenerator += ticks;
    else if (proc.comm.startsWith('postgres')) out.postgres += ticks;
    else if (proc.comm.startsWith('redis-server')) out.redis += ticks;
    else if (KERNEL_THREAD.test(proc.comm)) continue;
    else {
      out.other += ticks;
      others.set(`${proc.comm}[${pid}]`, ticks);
    }
  }
  const cores = os.cpus().length;
  const machine = b.total > a.total ? ((b.busy - a.busy) / (b.total - a.total)) * cores : 0;
  const named = share(out.service + out.loadGenerator + out.postgres + out.redis + out.other);
  return {
    service: share(out.service),
    loadGenerator: share(out.loadGenerator),
    postgres: share(out.postgres),
    redis: share(out.redis),
    other: share(out.other),
    kernel: Math.max(0, machine - named),
    machine,
    topOther: [...others]
      .sort((x, y) => y[1] - x[1])
      .slice(0, 3)
      .map(([name, ticks]) => `${name} ${Math.round(share(ticks) * 100)}%`),
  };
}

/** Busy share of the machine, in cores, over `ms`. */
export async function machineBusy(ms: number): Promise<number> {
  const a = await cpuSnapshot();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const b = await cpuSnapshot();
  return b.total > a.total ? ((b.busy - a.busy) / (b.total - a.total)) * os.cpus().length : 0;
}
