import { render } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ChangelogList, useChangelog, useUnread } from './components/changelog-list';
import { FeedbackDetail } from './components/feedback-detail';
import { FeedbackList, type ListSort } from './components/feedback-list';
import { SubmitForm } from './components/submit-form';
import { trapFocus } from './focus-trap';
import { type HostEvent, type PanelEnv, tracker } from './panel-env';
import { publicApi } from './public-api';
import { anonymousId, currentVisitor, onVisitorChange, setToken } from './visitor';
import './embed.css';

/*
 * The widget's panel, /widget?key=pk_…&host=<origin>, inside the loader's iframe. The host page
 * talks to it only by postMessage, and only from `host` (the page's origin, which the service's
 * frame-ancestors already holds to the project's allowed origins): `widget:identify` brings the
 * user token (kept in memory here, never in a URL), `widget:open` focuses the panel. The panel
 * answers `widget:ready` and the `feedback:*` events to that origin alone.
 */
const params = new URLSearchParams(window.location.search);
const publishableKey = params.get('key') ?? '';
const hostOrigin = (() => {
  try {
    return new URL(params.get('host') ?? '').origin;
  } catch {
    return null;
  }
})();
const embedded = window.parent !== window && hostOrigin !== null;

function toHost(type: string, detail: Record<string, unknown> = {}) {
  if (embedded && hostOrigin) window.parent.postMessage({ type, detail }, hostOrigin);
}

type View = { name: 'list' } | { name: 'item'; id: string } | { name: 'submit' } | { name: 'changelog' };

function WidgetPanel() {
  const [view, setView] = useState<View>({ name: 'list' });
  const [sort, setSort] = useState<ListSort>('votes');
  const [visitorVersion, setVisitorVersion] = useState(0);
  // Who the visitor is becomes known when the loader answers `widget:ready`: it sends the user
  // token it holds (`widget:identify`), then `widget:open`. Until then nothing is read or
  // tracked, so a signed user's first view is never counted as an anonymous reader's as well.
  const [visitorKnown, setVisitorKnown] = useState(!embedded);
  const [notice, setNotice] = useState<string | null>(null);
  const root = useRef<HTMLDivElement>(null);
  const api = useMemo(() => publicApi(publishableKey), []);

  useEffect(() => onVisitorChange(() => setVisitorVersion((version) => version + 1)), []);
  useEffect(() => {
    const onMessage = (event: MessageEvent) => {
      if (!embedded || event.source !== window.parent || event.origin !== hostOrigin) return;
      const data = event.data as { type?: unknown; token?: unknown } | null;
      if (data?.type === 'widget:identify') setToken(typeof data.token === 'string' ? data.token : null);
      if (data?.type === 'widget:open') {
        setVisitorKnown(true);
        root.current?.querySelector<HTMLElement>('h1')?.focus();
      }
    };
    window.addEventListener('message', onMessage);
    toHost('widget:ready');
    return () => window.removeEventListener('message', onMessage);
  }, []);
  useEffect(() => (root.current ? trapFocus(root.current, () => toHost('feedback:close')) : undefined), []);

  // The widget acts only for a signed user: anonymous feedback is the public board's.
  const visitor = useMemo(() => currentVisitor(false), [visitorVersion]);
  const env = useMemo<PanelEnv>(
    () => ({
      api,
      visitor,
      notify: (event: HostEvent, detail) => toHost(event, detail),
      track: tracker(api, () => (visitor.kind === 'reader' ? anonymousId() : visitor.userId)),
    }),
    [api, visitor],
  );

  // What's new: loaded once the visitor is known, its unread badge kept per project key.
  const changelog = useChangelog(env);
  const { unread, markSeen } = useUnread(publishableKey, changelog.entries);
  const openChangelog = () => {
    setView({ name: 'changelog' });
    markSeen();
  };

  return (
    <div class="panel" ref={root}>
      <header class="panel-head">
        <h1 tabIndex={-1}>Feedback</h1>
        <div class="row">
          <button
            type="button"
            aria-pressed={view.name === 'changelog'}
            aria-label={unread > 0 ? `What's new, ${unread} unread` : "What's new"}
            onClick={() => (view.name === 'changelog' ? setView({ name: 'list' }) : openChangelog())}
          >
            What's new
            {unread > 0 && (
              <span class="unread-badge" aria-hidden="true">
                {unread}
              </span>
            )}
          </button>
          {view.name !== 'submit' && visitor.kind !== 'reader' && (
            <button type="button" class="primary" onClick={() => setView({ name: 'submit' })}>
              New feedback
            </button>
          )}
          <button type="button" aria-label="Close feedback" onClick={() => toHost('feedback:close')}>
            ✕
          </button>
        </div>
      </header>
      <main class="panel-body">
        {!visitorKnown && <p class="muted">Loading…</p>}
        {notice && (
          <p class="notice" role="status">
            {notice}
          </p>
        )}
        {visitorKnown && view.name === 'list' && (
          <FeedbackList
            env={env}
            sort={sort}
            onSort={setSort}
            onOpen={(item) => setView({ name: 'item', id: item.id })}
            reloadKey={visitorVersion}
          />
        )}
        {view.name === 'changelog' && (
          <ChangelogList entries={changelog.entries} problem={changelog.problem} onOpenItem={(id) => setView({ name: 'item', id })} />
        )}
        {view.name === 'item' && <FeedbackDetail env={env} id={view.id} onBack={() => setView({ name: 'list' })} />}
        {view.name === 'submit' && (
          <SubmitForm
            env={env}
            onCancel={() => setView({ name: 'list' })}
            onDone={(item) => {
              setNotice(`Thanks! “${item.title}” was submitted.`);
              setView({ name: 'item', id: item.id });
            }}
            onVoted={(item) => {
              setNotice(`Thanks! Your vote went to “${item.title}”.`);
              setView({ name: 'item', id: item.id });
            }}
          />
        )}
      </main>
    </div>
  );
}

const mount = document.getElementById('widget');
if (mount) render(<WidgetPanel />, mount);
