import type { Schemas } from '../api/client';
import { formatCount } from './format';

export type PathsResult = Schemas['PathsResult'];
export type PathEdge = PathsResult['edges'][number];

/** An event name at one position of the paths: the same name at two positions is two nodes. */
export type PathNode = {
  id: string;
  step: number;
  name: string;
  /** Users who came to it by the moves listed (0 at step 1). */
  usersIn: number;
  /** Users who went on from it by the moves listed. */
  usersOut: number;
  /** Users at it: the start event's node holds every user with a path; others the larger flow. */
  users: number;
};

export type Flow = { name: string; users: number };
export type NodeFlows = { node: PathNode; before: Flow[]; after: Flow[]; stopped: number };

/** "1 user", "2 users". */
export const usersText = (count: number) => `${formatCount(count)} ${count === 1 ? 'user' : 'users'}`;

export const nodeId = (step: number, name: string) => `${step}:${name}`;

/** `2:checkout` back to its step and name (names may hold colons: only the first one separates). */
export function parseNodeId(id: string): { step: number; name: string } | null {
  const colon = id.indexOf(':');
  const step = Number(id.slice(0, colon));
  const name = id.slice(colon + 1);
  return colon > 0 && Number.isInteger(step) && step >= 1 && name ? { step, name } : null;
}

/**
 * The nodes of the moves: each (step, name) an edge touches, with the users flowing in and out.
 * With a start event every path begins at it, so its node counts all the answer's users, those
 * who stopped there included; elsewhere only the listed moves are known.
 */
export function pathNodes(answer: PathsResult): PathNode[] {
  const nodes = new Map<string, PathNode>();
  const at = (step: number, name: string) => {
    const id = nodeId(step, name);
    let node = nodes.get(id);
    if (!node) {
      node = { id, step, name, usersIn: 0, usersOut: 0, users: 0 };
      nodes.set(id, node);
    }
    return node;
  };
  for (const edge of answer.edges) {
    at(edge.step - 1, edge.from).usersOut += edge.users;
    at(edge.step, edge.to).usersIn += edge.users;
  }
  for (const node of nodes.values()) {
    const everyone = node.step === 1 && node.name === answer.start_event;
    node.users = everyone ? Math.max(answer.users, node.usersOut) : Math.max(node.usersIn, node.usersOut);
  }
  return [...nodes.values()].sort((a, b) => a.step - b.step || b.users - a.users || (a.name < b.name ? -1 : 1));
}

/**
 * Where a node's users came from (the names one step before) and went (one step after), most
 * first; `stopped` are those whose path ends at it (none at the last step: the depth cut them).
 */
export function flowsOf(node: PathNode, edges: PathEdge[], depth: number): NodeFlows {
  const byUsers = (a: Flow, b: Flow) => b.users - a.users || (a.name < b.name ? -1 : 1);
  const before = edges.filter((e) => e.step === node.step && e.to === node.name).map((e) => ({ name: e.from, users: e.users }));
  const after = edges.filter((e) => e.step === node.step + 1 && e.from === node.name).map((e) => ({ name: e.to, users: e.users }));
  return {
    node,
    before: before.sort(byUsers),
    after: after.sort(byUsers),
    stopped: node.step >= depth ? 0 : Math.max(0, node.users - node.usersOut),
  };
}
