import { z } from 'zod';

/** How many origins one project may list; a longer list is a configuration mistake, not a need. */
export const MAX_ALLOWED_ORIGINS = 100;

/**
 * One browser origin exactly as a browser sends it in the Origin header: `https://app.example.com`
 * or `http://localhost:5173`, scheme and host in lowercase, no path, no trailing slash, the port
 * only when it is not the scheme's default. The request's Origin is compared with these as
 * strings, and the widget's and the board's `frame-ancestors` lists them as they are: anything a
 * browser could never send (a path, user info, an upper-case host) or that a CSP would read as a
 * pattern (`*`, `https://*.example.com`, `http://127.0.0.*`, `http://*:8080`) is refused here with
 * a 400 naming the value, instead of silently never matching one check and widening the other.
 * Wildcard subdomains are not offered: list each origin (docs/widget.md).
 */
const origin = z
  .string({ error: 'must be a string' })
  .max(300, 'must be at most 300 characters')
  .superRefine((value, ctx) => {
    const problem = originProblem(value);
    if (problem) {
      ctx.addIssue({
        code: 'custom',
        message: `${JSON.stringify(value)} is not an exact origin (${problem}); give scheme, host and an optional port, such as https://app.example.com`,
      });
    }
  });

/** A DNS name of lowercase labels (punycode for others), or an IPv4 address, or a bracketed IPv6 one. */
const EXACT_ORIGIN =
  /^https?:\/\/(?:(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?$/;

/** Why a value is not an exact origin, or null when it is one. */
export function originProblem(value: string): string | null {
  if (!/^https?:\/\//.test(value)) return 'the scheme must be http or https';
  if (value.includes('*')) return 'a wildcard is not allowed';
  const authority = value.slice(value.indexOf('//') + 2);
  if (authority.includes('@')) return 'user info is not allowed';
  if (/[/?#]/.test(authority)) return 'a path, query or fragment is not allowed';
  if (/\.(?::\d*)?$/.test(authority)) return 'a trailing dot is not allowed';
  if (!EXACT_ORIGIN.test(value)) return 'the host must be a lowercase DNS name or an IP address';
  try {
    // Also the canonical form a browser sends: no default port, IPv4 in dotted decimal, port in range.
    if (new URL(value).origin !== value) return `a browser sends it as ${new URL(value).origin}`;
  } catch {
    return 'not a URL';
  }
  return null;
}

/** Whether a value is an exact origin (see originProblem). */
export const isExactOrigin = (value: string): boolean => originProblem(value) === null;

/** `allowedOrigins` of PATCH /projects/:id: the list replaces the previous one; `[]` allows any origin. */
export const allowedOrigins = z
  .array(origin, { error: 'must be an array of origins' })
  .max(MAX_ALLOWED_ORIGINS, `must hold at most ${MAX_ALLOWED_ORIGINS} origins`)
  .transform((origins) => [...new Set(origins)]);
