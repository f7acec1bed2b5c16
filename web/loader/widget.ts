/**
 * The widget's loader, GET /widget.js (docs/widget.md): a host page adds
 *   <script src="https://<service>/widget.js" data-key="pk_…" async></script>
 * and calls `Feedback('identify', { token })`, `Feedback('open')`, `Feedback('close')`, queued in
 * `window.Feedback.q` until this script runs. It creates the panel's iframe (served from the
 * service's own origin), hands it the user token by postMessage (never in a URL), and relays the
 * panel's events to the host page as `feedback:*` messages. Kept dependency-free: at most 5 KB
 * gzipped (measured by test/web/widget.test.ts).
 */

type Command = 'identify' | 'open' | 'close';
type QueuedCall = [Command, unknown?];
type FeedbackFunction = ((command: Command, options?: unknown) => void) & { q?: ArrayLike<QueuedCall>; loaded?: boolean };

/** The events the panel may post, relayed as they are to the host page. */
const RELAYED = new Set(['feedback:vote', 'feedback:submit', 'feedback:comment', 'feedback:close']);

const host = window as unknown as { Feedback?: FeedbackFunction };
const script = document.currentScript as HTMLScriptElement | null;

function start(loaderScript: HTMLScriptElement) {
  const key = loaderScript.dataset.key ?? '';
  const serviceOrigin = new URL(loaderScript.src).origin;
  let token: string | null = null;
  let frame: HTMLIFrameElement | null = null;
  let panelReady = false;
  let returnFocusTo: Element | null = null;

  /** Only the panel's own window, from the service's origin, is listened to. */
  const toPanel = (message: Record<string, unknown>) => {
    if (frame?.contentWindow && panelReady) frame.contentWindow.postMessage(message, serviceOrigin);
  };

  function ensureFrame(): HTMLIFrameElement {
    if (frame) return frame;
    frame = document.createElement('iframe');
    const url = new URL('/widget', serviceOrigin);
    url.searchParams.set('key', key);
    url.searchParams.set('host', window.location.origin);
    frame.src = url.href;
    frame.title = 'Feedback';
    frame.setAttribute('role', 'dialog');
    frame.setAttribute('aria-modal', 'true');
    // Styles through the CSSOM, which a host page's strict style-src does not govern.
    Object.assign(frame.style, {
      position: 'fixed',
      right: '16px',
      bottom: '16px',
      width: 'min(420px, calc(100vw - 32px))',
      height: 'min(640px, calc(100vh - 32px))',
      border: '0',
      borderRadius: '12px',
      boxShadow: '0 12px 40px rgba(0,0,0,.25)',
      zIndex: '2147483000',
      background: '#fff',
      display: 'none',
    });
    document.body.appendChild(frame);
    return frame;
  }

  function open() {
    const panel = ensureFrame();
    returnFocusTo = document.activeElement;
    panel.style.display = 'block';
    panel.focus();
    toPanel({ type: 'widget:open' });
  }

  function close() {
    if (!frame || frame.style.display === 'none') return;
    frame.style.display = 'none';
    if (returnFocusTo instanceof HTMLElement) returnFocusTo.focus();
  }

  window.addEventListener('message', (event) => {
    if (!frame || event.source !== frame.contentWindow || event.origin !== serviceOrigin) return;
    const data = event.data as { type?: unknown; detail?: unknown } | null;
    if (!data || typeof data.type !== 'string') return;
    if (data.type === 'widget:ready') {
      panelReady = true;
      if (token) toPanel({ type: 'widget:identify', token });
      if (frame.style.display !== 'none') toPanel({ type: 'widget:open' });
      return;
    }
    if (!RELAYED.has(data.type)) return;
    if (data.type === 'feedback:close') close();
    // To this page only: the host's own origin.
    window.postMessage({ type: data.type, detail: data.detail ?? null }, window.location.origin);
  });

  const feedback: FeedbackFunction = (command, options) => {
    if (command === 'identify') {
      const given = (options as { token?: unknown } | undefined)?.token;
      token = typeof given === 'string' ? given : null;
      toPanel({ type: 'widget:identify', token });
    } else if (command === 'open') open();
    else if (command === 'close') close();
  };
  const queued = Array.from(host.Feedback?.q ?? []);
  feedback.loaded = true;
  host.Feedback = feedback;
  for (const [command, options] of queued) feedback(command, options);
}

if (script && !host.Feedback?.loaded) {
  if (document.body) start(script);
  else document.addEventListener('DOMContentLoaded', () => start(script));
}
