import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Seals the secrets the service must read back to use them (a tracker integration's token and
 * webhook secret), so a copy of the database alone does not hand out write access to the owners'
 * repositories. AES-256-GCM with a random 96-bit nonce per value, under the service's SECRETS_KEY
 * (src/runtime/secrets-key.ts); the tag refuses a value changed or sealed under another key.
 *
 * A sealed value reads `v1.<nonce>.<ciphertext>.<tag>`, each part base64url: the version leaves
 * room for another scheme (or a rotated key) later without guessing.
 */
export type SecretBox = {
  seal(plain: string): string;
  /** Throws when the value was not sealed by this key (or was altered). */
  open(sealed: string): string;
};

const VERSION = 'v1';
export const SECRETS_KEY_BYTES = 32;

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== SECRETS_KEY_BYTES) throw new Error(`a secrets key is ${SECRETS_KEY_BYTES} bytes, not ${key.length}`);
  return {
    seal(plain) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [VERSION, nonce, ciphertext, cipher.getAuthTag()]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.');
    },
    open(sealed) {
      const [version, nonce, ciphertext, tag, ...rest] = sealed.split('.');
      if (version !== VERSION || nonce === undefined || ciphertext === undefined || tag === undefined || rest.length > 0) {
        throw new Error('not a sealed secret of this service');
      }
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      try {
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new Error('a sealed secret does not open with this SECRETS_KEY (another key sealed it, or it was altered)');
      }
    },
  };
}

/**
 * A key as SECRETS_KEY spells it: 64 hex digits, or 32 bytes in base64 (or base64url); null for
 * anything else.
 */
export function parseSecretsKey(text: string): Buffer | null {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) {
    const key = Buffer.from(value, value.includes('+') || value.includes('/') ? 'base64' : 'base64url');
    return key.length === SECRETS_KEY_BYTES ? key : null;
  }
  return null;
}
