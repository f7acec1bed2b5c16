import { hash, randomBytes } from 'node:crypto';

/** Prefixes make a leaked secret recognisable (and greppable by secret scanners). */
export const API_KEY_PREFIX = 'fbk_';
export const ADMIN_TOKEN_PREFIX = 'fba_';
export const OPERATOR_TOKEN_PREFIX = 'fbo_';
/** The HS256 secret a host app's server signs user tokens with (docs/widget.md). */
export const IDENTITY_SECRET_PREFIX = 'fbid_';
/** The key made for web pages; public by design, so stored and shown as is. */
export const PUBLISHABLE_KEY_PREFIX = 'pk_';
/** The signing key the server generates for a webhook integration created without one. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** A random secret of 256 bits, URL-safe. */
export function newSecret(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

/**
 * Secrets are stored as their SHA-256 only. They are long random strings, so a fast hash is
 * enough (no dictionary to defend against) and lets us look a key up by its hash in one index probe.
 */
export function hashSecret(secret: string): Buffer {
  // The one-shot crypto.hash: every key-authenticated request hashes its key, and the Hash object
  // of createHash was a visible share of the ingestion path's CPU profile.
  return hash('sha256', secret, 'buffer');
}
