import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createSecretBox, parseSecretsKey, SECRETS_KEY_BYTES, type SecretBox } from '../core/secret-box.js';

/**
 * The secret box of the process, under SECRETS_KEY; when unset, under a key generated once and
 * kept in `<dataDir>/secrets-key` (mode 600), as the operator token is (operator-token.ts). Every
 * process that reads sealed secrets must share the key: with an API and workers in containers of
 * their own (docker compose), SECRETS_KEY is required (docs/operations.md).
 */
export async function resolveSecretBox(fromEnv: string | undefined, dataDir: string): Promise<SecretBox> {
  if (fromEnv) return createSecretBox(parseSecretsKey(fromEnv) as Buffer);
  const file = path.join(dataDir, 'secrets-key');
  const stored = await readStored(file);
  if (stored) return createSecretBox(stored);
  await mkdir(dataDir, { recursive: true });
  const key = randomBytes(SECRETS_KEY_BYTES);
  // 'wx' fails if another process created the file meanwhile; then read theirs.
  try {
    await writeFile(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    return createSecretBox(key);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return createSecretBox((await readStored(file)) as Buffer);
  }
}

async function readStored(file: string): Promise<Buffer | null> {
  try {
    const text = (await readFile(file, 'utf8')).trim();
    if (!text) return null;
    const key = parseSecretsKey(text);
    if (!key)
      throw new Error(
        `${file} does not hold a secrets key (64 hex digits): restore it, or remove it to start anew (sealed secrets are then lost)`,
      );
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}
