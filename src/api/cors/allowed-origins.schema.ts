import { z } from 'zod';

/** How many origins one project may list; a longer list is a configuration mistake, not a need. */
export const MAX_ALLOWED_ORIGINS = 100;

/**
 * One browser origin exactly as a browser sends it in the Origin header: `https://app.example.com`
 * or `http://localhost:5173`, scheme and host in lowercase, no path, no trailing slash, the port
 * only when it is not the scheme's default. The request's Origin is compared with these as
 * strings, so anything a browser could never send (a path, `*`, an upper-case host) is refused
 * here instead of silently never matching.
 */
const origin = z
  .string({ error: 'must be a string' })
  .max(300, 'must be at most 300 characters')
  .refine(isExactOrigin, { error: 'must be an origin such as https://app.example.com (scheme, host and port only)' });

function isExactOrigin(value: string): boolean {
  if (!/^https?:\/\//.test(value)) return false;
  try {
    return new URL(value).origin === value;
  } catch {
    return false;
  }
}

/** `allowedOrigins` of PATCH /projects/:id: the list replaces the previous one; `[]` allows any origin. */
export const allowedOrigins = z
  .array(origin, { error: 'must be an array of origins' })
  .max(MAX_ALLOWED_ORIGINS, `must hold at most ${MAX_ALLOWED_ORIGINS} origins`)
  .transform((origins) => [...new Set(origins)]);
