import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * The labelled feature requests of test/fixtures/similar-requests.json (issue 40), in the order
 * they are filed: a seeded shuffle of every request, each group's members keeping the order they
 * are written in, so the first written is the first filed and the others arrive among unrelated
 * requests, as duplicates do.
 */

export type Request = { title: string; description: string };
export type FiledRequest = Request & { group: number | null; first: boolean };

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'similar-requests.json');

export function labelledRequests(): { groups: Request[][]; singles: Request[] } {
  return JSON.parse(readFileSync(FIXTURE, 'utf8'));
}

/** mulberry32: a tiny seeded generator, so every run files the same order. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function filingOrder(seed = 40): FiledRequest[] {
  const { groups, singles } = labelledRequests();
  const random = seeded(seed);
  const all: (FiledRequest & { key: number })[] = [
    ...groups.flatMap((members, group) => members.map((request, index) => ({ ...request, group, first: index === 0, key: random() }))),
    ...singles.map((request) => ({ ...request, group: null, first: false, key: random() })),
  ];
  // Within a group the smallest keys go to the members in written order.
  for (const [group] of groups.entries()) {
    const members = all.filter((request) => request.group === group);
    const keys = members.map((request) => request.key).sort((a, b) => a - b);
    members.forEach((request, index) => {
      request.key = keys[index] as number;
    });
  }
  return all.sort((a, b) => a.key - b.key).map(({ key: _key, ...request }) => request);
}
