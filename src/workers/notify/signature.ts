import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signature of generic webhooks, in the header `X-Feedback-Signature: t=<unix seconds>,v1=<hex>`:
 * v1 is the HMAC-SHA256, under the integration's secret, of `<t>.<raw body>`. Signing the
 * timestamp with the body lets a receiver refuse an old request replayed by someone who captured
 * it (README "Webhook signatures" has a receiver's check).
 */
export const SIGNATURE_HEADER = 'X-Feedback-Signature';

export function signatureOf(secret: string, timestamp: number, rawBody: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex');
}

export function signatureHeader(secret: string, rawBody: string, now = Date.now()): string {
  const timestamp = Math.floor(now / 1000);
  return `t=${timestamp},v1=${signatureOf(secret, timestamp, rawBody)}`;
}

/**
 * A receiver's check: the header parses, its timestamp is within `toleranceSeconds` of now, and
 * one of its v1 values is the HMAC of `<t>.<raw body>` (compared in constant time).
 */
export function verifySignature(
  secret: string,
  rawBody: string,
  header: string | null | undefined,
  options: { toleranceSeconds?: number; now?: number } = {},
): boolean {
  if (!header) return false;
  const parts = header.split(',').map((part) => part.trim().split('='));
  const timestamp = Number(parts.find(([key]) => key === 't')?.[1]);
  if (!Number.isInteger(timestamp)) return false;
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) return false;
  const expected = Buffer.from(signatureOf(secret, timestamp, rawBody), 'hex');
  return parts
    .filter(([key, value]) => key === 'v1' && value !== undefined && /^[0-9a-f]{64}$/.test(value))
    .some(([, value]) => timingSafeEqual(Buffer.from(value as string, 'hex'), expected));
}
