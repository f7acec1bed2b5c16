import { useEffect, useState } from 'preact/hooks';
import { safeStorage } from '../../lib/safe-storage';
import type { PanelEnv } from '../panel-env';
import { type ChangelogEntry, refusalText, unwrap } from '../public-api';

/*
 * The changelog's readers (docs/widget.md "What's new"): the widget's tab and the board's page
 * show the published entries (GET /changelog). Their HTML is the server's sanitized rendering
 * (src/core/changelog-html.ts), set as is: this page renders no Markdown and adds no markup.
 */

const seenStorage = safeStorage('localStorage');
const seenKey = (project: string) => `feedback-changelog-seen:${project}`;

/** The published entries, newest first, loaded once per page; null while loading. */
export function useChangelog(env: PanelEnv): { entries: ChangelogEntry[] | null; problem: string | null } {
  const [entries, setEntries] = useState<ChangelogEntry[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    unwrap(env.api.GET('/changelog', { params: { query: {} } }))
      .then(setEntries)
      .catch((error: unknown) => {
        setEntries([]);
        setProblem(refusalText(error));
      });
  }, [env.api]);
  return { entries, problem };
}

/**
 * How many entries came out since the visitor last opened the changelog here, kept in the
 * browser's storage (in this page's memory where a framed page is denied storage), and `markSeen`
 * for when they open it. A first visit counts every entry as new.
 */
export function useUnread(project: string, entries: ChangelogEntry[] | null): { unread: number; markSeen: () => void } {
  const [seen, setSeen] = useState(() => seenStorage.get(seenKey(project)));
  const unread = (entries ?? []).filter((entry) => seen === null || entry.published_at > seen).length;
  const markSeen = () => {
    const newest = entries?.[0]?.published_at;
    if (!newest) return;
    seenStorage.set(seenKey(project), newest);
    setSeen(newest);
  };
  return { unread, markSeen };
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

export function ChangelogList({
  entries,
  problem,
  itemHref,
  onOpenItem,
}: {
  entries: ChangelogEntry[] | null;
  problem: string | null;
  itemHref?: (id: string) => string;
  onOpenItem?: (id: string) => void;
}) {
  if (problem) return <p class="problem">{problem}</p>;
  if (entries === null) return <p class="muted">Loading…</p>;
  if (entries.length === 0) return <p class="muted">Nothing published yet.</p>;
  return (
    <ol class="changelog" aria-label="What's new">
      {entries.map((entry) => (
        <li key={entry.id} id={entry.id}>
          <article class="changelog-entry" aria-labelledby={`entry-${entry.id}`}>
            <header>
              <h2 id={`entry-${entry.id}`}>{entry.title}</h2>
              <p class="muted">
                <time dateTime={entry.published_at}>{dateFormat.format(new Date(entry.published_at))}</time>
                {entry.category && <span class="changelog-category"> · {entry.category}</span>}
              </p>
            </header>
            {/* Sanitized on the server: script, handlers and unsafe links never reach here. */}
            <div class="changelog-body" dangerouslySetInnerHTML={{ __html: entry.html }} />
            {entry.linked_items.length > 0 && (
              <p class="changelog-items">
                Shipped:{' '}
                {entry.linked_items.map((item, index) => (
                  <span key={item.id}>
                    {index > 0 && ', '}
                    {itemHref ? (
                      <a
                        href={itemHref(item.id)}
                        onClick={(event) => {
                          if (!onOpenItem) return;
                          event.preventDefault();
                          onOpenItem(item.id);
                        }}
                      >
                        {item.title}
                      </a>
                    ) : (
                      item.title
                    )}
                  </span>
                ))}
              </p>
            )}
          </article>
        </li>
      ))}
    </ol>
  );
}
