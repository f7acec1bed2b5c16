import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { createFeedback, createProject, type TestProject } from '../helpers/factories.js';
import { eventually } from '../helpers/redis.js';
import { useTestServer } from '../helpers/server.js';

const DOCS_PATH = new URL('../../docs/clickhouse.md', import.meta.url);

/** The body of every ```sql fenced block, in order. */
function sqlBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sql[ \t]*\n([\s\S]*?)^```[ \t]*$/gm)].map((match) => (match[1] ?? '').trim());
}

/** The section of the docs whose `## ` heading names the table, up to the next `## ` heading. */
function tableSection(markdown: string, table: string): string {
  const sections = markdown.split(/^(?=## )/m);
  const section = sections.find((text) => text.startsWith(`## Table \`${table}\``));
  if (!section) throw new Error(`docs/clickhouse.md has no "## Table \`${table}\`" section`);
  return section;
}

type Column = { name: string; type: string; comment: string };

describe('docs/clickhouse.md', () => {
  const server = useTestServer();
  let project: TestProject;
  let docs: string;

  beforeAll(async () => {
    docs = await readFile(DOCS_PATH, 'utf8');
    project = await createProject(server, { plan: 'pro' });

    // Events over the last days (before the votes below), with and without a `plan` property.
    const day = 24 * 3600 * 1000;
    const events = [];
    for (let d = 1; d <= 5; d++) {
      for (let u = 1; u <= 4; u++) {
        events.push({
          eventName: ['feedback_list', 'feedback_detail', 'checkout_started'][(d + u) % 3],
          userId: `user-${u}`,
          timestamp: new Date(Date.now() - d * day - u * 60_000).toISOString(),
          ...(u === 4 ? {} : { properties: { plan: u === 1 ? 'pro' : 'free', screen: `s${d}` } }),
        });
      }
    }
    const batch = await server.request('POST', '/api/v1/events/batch', { apiKey: project.apiKey, body: { events } });
    expect(batch.status, JSON.stringify(batch.body).slice(0, 300)).toBe(200);

    // Facts: feedback by user-1 (with the creator's vote), votes by user-2 and user-3, an MRR.
    const feedback = await createFeedback(server, project, { userId: 'user-1' });
    for (const userId of ['user-2', 'user-3']) {
      const vote = await server.request('POST', `/api/v1/feedbacks/${feedback.id}/votes`, {
        apiKey: project.apiKey,
        body: { userId },
      });
      expect(vote.status).toBe(200);
    }
    const registered = await server.request('POST', '/api/v1/users/register', {
      apiKey: project.apiKey,
      body: { userId: 'user-1', mrr: 49 },
    });
    expect(registered.status).toBe(200);

    await eventually('the events and facts in ClickHouse', 15_000, async () => {
      const [counts] = await server.clickhouseRows<{ events: string | number; facts: string | number }>(
        `SELECT (SELECT count() FROM events WHERE project_id = {p:UUID}) AS events,
                (SELECT count() FROM facts WHERE project_id = {p:UUID}) AS facts`,
        { p: project.id },
      );
      return Number(counts?.events) === events.length && Number(counts?.facts) === 5;
    });
  });

  it('has three ```sql examples, each using the {project_id:UUID} parameter', () => {
    const blocks = sqlBlocks(docs);
    expect(blocks).toHaveLength(3);
    for (const block of blocks) expect(block).toContain('{project_id:UUID}');
  });

  it('every ```sql example runs as written and returns rows for a project with data', async () => {
    const blocks = sqlBlocks(docs);
    for (const [i, query] of blocks.entries()) {
      let rows: Record<string, unknown>[] = [];
      try {
        rows = await server.clickhouseRows(query, { project_id: project.id });
      } catch (error) {
        throw new Error(`example ${i + 1} of docs/clickhouse.md failed: ${(error as Error).message}\n${query}`);
      }
      expect(rows.length, `rows of example ${i + 1}:\n${query}`).toBeGreaterThan(0);
      // The parameter really selects the project: another project's answer is empty.
      expect(await server.clickhouseRows(query, { project_id: randomUUID() }), `example ${i + 1}`).toEqual([]);
    }
  });

  it('the examples answer what they say on the data above', async () => {
    const [dau, topValues, voters] = await Promise.all(
      sqlBlocks(docs).map((query) => server.clickhouseRows<Record<string, unknown>>(query, { project_id: project.id })),
    );
    // 5 days x 4 users, one event each: per (day, name) the users are distinct.
    expect(dau?.reduce((sum, row) => sum + Number(row.events), 0)).toBe(20);
    expect(topValues?.map((row) => [row.plan, Number(row.events)])).toEqual([
      ['free', 10],
      ['pro', 5],
    ]);
    // user-1 (creator), user-2 and user-3 voted, after all their events; user-4 did not vote.
    expect((voters ?? []).every((row) => Number(row.voters) >= 1 && Number(row.voters) <= 3)).toBe(true);
    expect((voters ?? []).reduce((sum, row) => sum + Number(row.events), 0)).toBe(15);
  });

  for (const table of ['events', 'facts', 'events_daily', 'events_hourly', 'schema_migrations']) {
    it(`documents every column of \`${table}\` with its type${table === 'schema_migrations' ? '' : ', and each has a COMMENT'}`, async () => {
      const columns = await server.clickhouseRows<Column>(`DESCRIBE TABLE ${table}`);
      expect(columns.length).toBeGreaterThan(0);
      const section = tableSection(docs, table);
      const lines = section.split('\n');
      for (const column of columns) {
        if (table !== 'schema_migrations') {
          expect(column.comment.trim(), `COMMENT of ${table}.${column.name}`).not.toBe('');
        }
        const row = lines.find((line) => line.startsWith(`| \`${column.name}\` |`));
        expect(row, `docs/clickhouse.md documents ${table}.${column.name}`).toBeDefined();
        // Types compared without spaces: the server prints JSON(max_dynamic_paths=256).
        const squeeze = (text: string) => text.replace(/\s+/g, '');
        expect(squeeze(row ?? ''), `documented type of ${table}.${column.name}`).toContain(squeeze(`\`${column.type}\``));
        expect(row?.split('|')[3]?.trim().length ?? 0, `meaning of ${table}.${column.name}`).toBeGreaterThan(10);
      }
      // And nothing documented that the table does not have.
      const documented = lines.flatMap((line) => /^\| `(\w+)` \|/.exec(line)?.[1] ?? []);
      expect(documented.sort()).toEqual(columns.map((column) => column.name).sort());
    });
  }

  it('columns are also listed by system.columns with the same comments', async () => {
    const rows = await server.clickhouseRows<{ table: string; name: string; comment: string }>(
      `SELECT table, name, comment FROM system.columns
       WHERE database = currentDatabase() AND table IN ('events', 'facts', 'events_daily', 'events_hourly')
       ORDER BY table, position`,
    );
    expect(rows.length).toBeGreaterThanOrEqual(8 + 14);
    for (const row of rows) {
      expect(row.comment, `${row.table}.${row.name}`).not.toBe('');
      expect(tableSection(docs, row.table)).toContain(`\`${row.name}\``);
    }
  });
});
