import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { safeStorage } from '../lib/safe-storage';
import { ChangelogList, useChangelog } from './components/changelog-list';
import { FeedbackDetail } from './components/feedback-detail';
import { FeedbackList } from './components/feedback-list';
import { Roadmap } from './components/roadmap';
import { SubmitForm } from './components/submit-form';
import { type PanelEnv, tracker } from './panel-env';
import { publicApi, refusalText } from './public-api';
import { anonymousId, currentToken, currentVisitor, onVisitorChange, setToken } from './visitor';
import './embed.css';

/*
 * The public board, /board/<slug>[/new | /roadmap | /submit | /items/<id>]: every view has its
 * own URL, so a link can be shared. A host app identifies its user with a link carrying a signed
 * token in the fragment (/board/<slug>#token=…: a fragment never reaches a server or its log);
 * the page moves it out of the URL at once and keeps it in this tab's sessionStorage (in memory
 * only where the browser denies storage to a board framed by another site).
 */
type Board = { name: string; slug: string; publishable_key: string; anonymous_feedback: boolean; require_signed_identity: boolean };
type View =
  | { name: 'top' }
  | { name: 'new' }
  | { name: 'roadmap' }
  | { name: 'submit' }
  | { name: 'changelog' }
  | { name: 'item'; id: string }
  | { name: 'missing' };

const slug = window.location.pathname.split('/')[2] ?? '';
const base = `/board/${slug}`;
const TOKEN_KEY = `feedback-board-token:${slug}`;
const tabStorage = safeStorage('sessionStorage');

function adoptTokenFromLink() {
  const fragment = new URLSearchParams(window.location.hash.slice(1));
  const linked = fragment.get('token');
  if (linked) {
    history.replaceState(history.state, '', window.location.pathname + window.location.search);
    tabStorage.set(TOKEN_KEY, linked);
  }
  setToken(linked ?? tabStorage.get(TOKEN_KEY));
}

function viewOf(pathname: string): View {
  const rest = pathname.slice(base.length).replace(/\/+$/, '');
  if (rest === '') return { name: 'top' };
  if (rest === '/new') return { name: 'new' };
  if (rest === '/roadmap') return { name: 'roadmap' };
  if (rest === '/submit') return { name: 'submit' };
  if (rest === '/changelog') return { name: 'changelog' };
  const item = /^\/items\/([0-9a-f-]{36})$/.exec(rest);
  return item?.[1] ? { name: 'item', id: item[1] } : { name: 'missing' };
}

function BoardPage({ board }: { board: Board }) {
  const [view, setView] = useState<View>(() => viewOf(window.location.pathname));
  const [visitorVersion, setVisitorVersion] = useState(0);
  const [notice, setNotice] = useState<string | null>(null);
  useEffect(() => onVisitorChange(() => setVisitorVersion((version) => version + 1)), []);
  useEffect(() => {
    const onPop = () => setView(viewOf(window.location.pathname));
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const go = (path: string) => {
    history.pushState(null, '', base + path);
    setNotice(null);
    setView(viewOf(base + path));
    window.scrollTo(0, 0);
  };

  const anonymousAllowed = board.anonymous_feedback && !board.require_signed_identity;
  const api = useMemo(() => publicApi(board.publishable_key, () => (anonymousAllowed && !currentToken() ? anonymousId() : null)), [board]);
  const visitor = useMemo(() => currentVisitor(anonymousAllowed), [visitorVersion, anonymousAllowed]);
  const env = useMemo<PanelEnv>(
    () => ({
      api,
      visitor,
      notify: () => undefined,
      track: tracker(api, () => (visitor.kind === 'reader' ? anonymousId() : visitor.userId)),
    }),
    [api, visitor],
  );
  useEffect(() => {
    document.title = `${board.name}: feedback`;
  }, [board.name]);

  const nav: [string, string, View['name']][] = [
    ['', 'Top', 'top'],
    ['/new', 'New', 'new'],
    ['/roadmap', 'Roadmap', 'roadmap'],
    ['/changelog', 'Changelog', 'changelog'],
  ];
  return (
    <div class="board">
      <header class="board-head">
        <h1>{board.name}</h1>
        <nav aria-label="Board">
          {nav.map(([path, label, name]) => (
            <a
              key={name}
              href={base + path}
              aria-current={view.name === name ? 'page' : undefined}
              onClick={(event) => {
                event.preventDefault();
                go(path);
              }}
            >
              {label}
            </a>
          ))}
          {visitor.kind !== 'reader' && (
            <a
              class="primary-link"
              href={`${base}/submit`}
              aria-current={view.name === 'submit' ? 'page' : undefined}
              onClick={(event) => {
                event.preventDefault();
                go('/submit');
              }}
            >
              New feedback
            </a>
          )}
        </nav>
        <p class="muted">
          {visitor.kind === 'identified' && 'Signed in through the app.'}
          {visitor.kind === 'anonymous' && 'You take part anonymously; new feedback is reviewed before it appears.'}
          {visitor.kind === 'reader' && 'Open this board from the app to vote, comment and share feedback.'}
        </p>
      </header>
      <main>
        {notice && (
          <p class="notice" role="status">
            {notice}
          </p>
        )}
        {(view.name === 'top' || view.name === 'new') && (
          <FeedbackList
            env={env}
            sort={view.name === 'top' ? 'votes' : 'newest'}
            onSort={(sort) => go(sort === 'votes' ? '' : '/new')}
            sortControl={false}
            onOpen={(item) => go(`/items/${item.id}`)}
          />
        )}
        {view.name === 'roadmap' && <Roadmap env={env} itemHref={(id) => `${base}/items/${id}`} onOpen={(id) => go(`/items/${id}`)} />}
        {view.name === 'changelog' && <BoardChangelog env={env} onOpenItem={(id) => go(`/items/${id}`)} />}
        {view.name === 'item' && <FeedbackDetail env={env} id={view.id} onBack={() => go('')} />}
        {view.name === 'submit' && (
          <SubmitForm
            env={env}
            onCancel={() => go('')}
            onDone={(item) => {
              if (visitor.kind === 'anonymous') {
                go('');
                setNotice('Thanks! Your feedback will appear once the team has reviewed it.');
              } else {
                go(`/items/${item.id}`);
                setNotice(`Thanks! “${item.title}” was submitted.`);
              }
            }}
            onVoted={(item) => {
              go(`/items/${item.id}`);
              setNotice(`Thanks! Your vote went to “${item.title}”.`);
            }}
          />
        )}
        {view.name === 'missing' && <p class="muted">This page does not exist.</p>}
      </main>
    </div>
  );
}

function BoardApp() {
  const [board, setBoard] = useState<Board | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    // The board's description is a public read: no key yet (it brings the key).
    fetch(`/api/v1/boards/${encodeURIComponent(slug)}`)
      .then(async (response) => {
        if (response.status === 404) throw new Error('This board does not exist or is not public.');
        if (!response.ok) throw new Error(`The board could not be loaded (${response.status}).`);
        setBoard((await response.json()) as Board);
      })
      .catch((error) => setProblem(refusalText(error) === 'Something went wrong.' ? String((error as Error).message) : refusalText(error)));
  }, []);
  if (problem)
    return (
      <main class="board">
        <h1>Feedback board</h1>
        <p class="problem" role="alert">
          {problem}
        </p>
      </main>
    );
  if (!board)
    return (
      <main class="board">
        <h1>Feedback board</h1>
        <p class="muted">Loading…</p>
      </main>
    );
  return <BoardPage board={board} />;
}

adoptTokenFromLink();
const mount = document.getElementById('board');
if (mount) render(<BoardApp />, mount);

/** The board's Changelog page: the published entries, and the Atom feed for feed readers. */
function BoardChangelog({ env, onOpenItem }: { env: PanelEnv; onOpenItem: (id: string) => void }) {
  const { entries, problem } = useChangelog(env);
  return (
    <section aria-labelledby="changelog-heading" class="stack">
      <h2 id="changelog-heading">Changelog</h2>
      <p class="muted">
        <a href={`${base}/changelog.atom`} type="application/atom+xml">
          Follow in a feed reader (Atom)
        </a>
      </p>
      <ChangelogList entries={entries} problem={problem} itemHref={(id) => `${base}/items/${id}`} onOpenItem={onOpenItem} />
    </section>
  );
}
