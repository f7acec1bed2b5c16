import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSecretBox, parseSecretsKey } from '../../src/core/secret-box.js';
import { resolveSecretBox } from '../../src/runtime/secrets-key.js';
import { makeDataDir } from '../helpers/process.js';

/* The sealing of the secrets the service reads back (tracker tokens): AES-256-GCM under SECRETS_KEY. */

describe('the secret box', () => {
  const box = createSecretBox(randomBytes(32));

  it('opens what it sealed, and seals the same text differently each time', () => {
    const sealed = box.seal('github_pat_0123456789');
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain('github_pat');
    expect(box.open(sealed)).toBe('github_pat_0123456789');
    expect(box.seal('github_pat_0123456789')).not.toBe(sealed);
  });

  it('refuses a value sealed under another key, altered, or not sealed at all', () => {
    const sealed = box.seal('lin_api_secret');
    expect(() => createSecretBox(randomBytes(32)).open(sealed)).toThrow(/does not open with this SECRETS_KEY/);
    const [version, nonce, ciphertext, tag] = sealed.split('.');
    const flipped = Buffer.from(ciphertext as string, 'base64url');
    flipped[0] = (flipped[0] as number) ^ 1;
    expect(() => box.open([version, nonce, flipped.toString('base64url'), tag].join('.'))).toThrow(/altered/);
    expect(() => box.open('lin_api_secret')).toThrow(/not a sealed secret/);
  });

  it('reads SECRETS_KEY as 64 hex digits or 32 bytes of base64', () => {
    const key = randomBytes(32);
    expect(parseSecretsKey(key.toString('hex'))).toEqual(key);
    expect(parseSecretsKey(key.toString('base64'))).toEqual(key);
    expect(parseSecretsKey(key.toString('base64url'))).toEqual(key);
    expect(parseSecretsKey('too short')).toBeNull();
    expect(parseSecretsKey('0'.repeat(62))).toBeNull();
  });
});

describe('the secrets key of a process', () => {
  it('is generated once into DATA_DIR/secrets-key (mode 600) when SECRETS_KEY is unset, and read again after', async () => {
    const dir = await makeDataDir();
    const first = await resolveSecretBox(undefined, dir);
    const file = path.join(dir, 'secrets-key');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file, 'utf8')).trim()).toMatch(/^[0-9a-f]{64}$/);
    const sealed = first.seal('token');
    expect((await resolveSecretBox(undefined, dir)).open(sealed)).toBe('token');
  });

  it('is SECRETS_KEY when set, whatever DATA_DIR holds', async () => {
    const dir = await makeDataDir();
    const key = randomBytes(32).toString('hex');
    const sealed = (await resolveSecretBox(key, dir)).seal('token');
    expect(createSecretBox(Buffer.from(key, 'hex')).open(sealed)).toBe('token');
    await expect(stat(path.join(dir, 'secrets-key'))).rejects.toThrow();
  });
});
