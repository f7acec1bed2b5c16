/**
 * The one Content-Security-Policy of every page this service serves: the dashboard
 * (web-static.ts) and the pages other sites show (embed-pages.ts). Only this origin's files run:
 * no inline script, no eval, no other origin. Styles set through the DOM (uPlot, Preact's style
 * props) are CSSOM changes, which style-src does not govern, so no 'unsafe-inline' is needed for
 * them either. Only who may frame the page differs: nobody for the dashboard (clickjacking), the
 * project's allowed origins for the widget's panel and the public board.
 */
export function pageCsp(frameAncestors: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    `frame-ancestors ${frameAncestors}`,
  ].join('; ');
}

/** The policy of a page no other site may frame. */
export const UNFRAMED_PAGE_CSP = pageCsp("'none'");
