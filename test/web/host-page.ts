import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stopWhenDone } from '../helpers/lifecycle.js';

/** Stops `server` when the test (or, started in a hook, the file) is done; closing earlier is allowed. */
function closedWhenDone(server: Server): () => Promise<void> {
  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= new Promise<void>((resolve) => server.close(() => resolve()));
    return closed;
  };
  stopWhenDone(close);
  return close;
}

/**
 * A host app's page on another origin (a second local port), as a customer would write it: its
 * own strict CSP (no inline script, frames and scripts only from the feedback service), the
 * loader's snippet, and a script of its own that queues `identify` before the loader has run and
 * records the `feedback:*` events it receives in `window.hostEvents`. Closed when the test (or,
 * started in a hook, the file) is done.
 */
export type HostPage = { origin: string; url: string; close(): Promise<void> };

export async function startHostPage(serviceUrl: string, publishableKey: string, userToken: string): Promise<HostPage> {
  const csp = [
    "default-src 'none'",
    `script-src 'self' ${serviceUrl}`,
    `frame-src ${serviceUrl}`,
    "style-src 'self'",
    "base-uri 'none'",
  ].join('; ');
  const hostScript = `
window.hostEvents = [];
window.Feedback = window.Feedback || function () { (window.Feedback.q = window.Feedback.q || []).push(arguments); };
window.addEventListener('message', function (event) {
  if (event.origin !== window.location.origin) return;
  if (event.data && typeof event.data.type === 'string' && event.data.type.indexOf('feedback:') === 0) window.hostEvents.push(event.data);
});
Feedback('identify', { token: ${JSON.stringify(userToken)} });
document.getElementById('open-feedback').addEventListener('click', function () { Feedback('open'); });
`;
  const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Acme Notes</title><link rel="stylesheet" href="/host.css"></head>
<body><main><h1>Acme Notes</h1><p>Your notes, everywhere.</p>
<button id="open-feedback" type="button">Give feedback</button></main>
<script src="/host.js"></script>
<script src="${serviceUrl}/widget.js" data-key="${publishableKey}" async></script>
</body></html>`;
  const css =
    'body{font-family:system-ui,sans-serif;margin:0;padding:2rem;background:#f3f4f8;color:#1c2030}main{max-width:40rem}button{font:inherit;padding:.5rem 1rem}';
  const server: Server = createServer((request, response) => {
    const files: Record<string, [string, string]> = {
      '/': ['text/html; charset=utf-8', page],
      '/host.js': ['text/javascript; charset=utf-8', hostScript],
      '/host.css': ['text/css; charset=utf-8', css],
    };
    const file = files[request.url ?? ''];
    if (!file) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'Content-Type': file[0], 'Content-Security-Policy': csp }).end(file[1]);
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, url: `${origin}/`, close: closedWhenDone(server) };
}

/**
 * A page of another site that frames one page of the service: `/?src=<path>` puts
 * `<serviceUrl><path>` (fragment included) in an iframe, under a CSP that allows only that frame.
 */
export async function startFramingPage(serviceUrl: string): Promise<HostPage & { framing(servicePath: string): string }> {
  const csp = ["default-src 'none'", `frame-src ${serviceUrl}`, "base-uri 'none'"].join('; ');
  const attribute = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://host');
    const src = url.searchParams.get('src');
    if (url.pathname !== '/' || !src?.startsWith('/')) {
      response.writeHead(404).end();
      return;
    }
    const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme blog</title></head>
<body><h1>Acme blog</h1><iframe src="${attribute(serviceUrl + src)}" title="Feedback board" width="900" height="700"></iframe></body></html>`;
    response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': csp }).end(page);
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: `${origin}/`,
    framing: (servicePath) => `${origin}/?src=${encodeURIComponent(servicePath)}`,
    close: closedWhenDone(server),
  };
}
