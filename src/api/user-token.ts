import { errors, jwtVerify } from 'jose';
import { unauthorized } from './errors.js';

/** The user a host app's server vouches for (docs/widget.md, "Signed identity"). */
export type SignedIdentity = { userId: string; email?: string; mrr?: number | null };

/** A token may live at most this long: a leaked token stops working within 30 days at worst. */
export const MAX_TOKEN_LIFETIME_SECONDS = 30 * 24 * 3600;

/** Clock difference tolerated between the host app's server and ours. */
const CLOCK_TOLERANCE_SECONDS = 60;

/**
 * Verifies an `X-User-Token`: a JWT signed with HS256 by the host app's server using the
 * project's identity secret. `sub` is the app's userId; `exp` is required and at most 30 days
 * ahead; `email` and `mrr` are optional. Any failure is a 401 (SPEC 7.1 body) whose reason says
 * what was wrong, never the token itself.
 */
export async function verifyUserToken(token: string, secret: string | null, now = new Date()): Promise<SignedIdentity> {
  if (!secret) throw unauthorized('X-User-Token: this project has no identity secret yet');
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, new TextEncoder().encode(secret), {
      algorithms: ['HS256'],
      requiredClaims: ['sub', 'exp'],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      currentDate: now,
    }));
  } catch (error) {
    throw unauthorized(`X-User-Token: ${reasonOf(error)}`);
  }
  const nowSeconds = Math.floor(now.getTime() / 1000);
  if (typeof payload.exp !== 'number' || payload.exp > nowSeconds + MAX_TOKEN_LIFETIME_SECONDS + CLOCK_TOLERANCE_SECONDS) {
    throw unauthorized('X-User-Token: exp must be at most 30 days ahead');
  }
  const { sub, email, mrr } = payload;
  if (typeof sub !== 'string' || sub.length === 0 || sub.length > 200) {
    throw unauthorized('X-User-Token: sub must be the user id (1 to 200 characters)');
  }
  const identity: SignedIdentity = { userId: sub };
  if (email !== undefined && email !== null) {
    if (typeof email !== 'string' || email.length > 320) throw unauthorized('X-User-Token: email must be a string');
    identity.email = email;
  }
  if (mrr !== undefined) {
    if (mrr !== null && (typeof mrr !== 'number' || !Number.isFinite(mrr) || mrr < 0)) {
      throw unauthorized('X-User-Token: mrr must be a non-negative number or null');
    }
    identity.mrr = mrr;
  }
  return identity;
}

function reasonOf(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'the token has expired';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'the signature does not match this project’s identity secret';
  if (error instanceof errors.JWTClaimValidationFailed) return `claim ${error.claim}: ${error.reason}`;
  if (error instanceof errors.JOSEAlgNotAllowed) return 'only HS256 is accepted';
  return 'not a valid signed token';
}
