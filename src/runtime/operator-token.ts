import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { newSecret, OPERATOR_TOKEN_PREFIX } from '../core/secrets.js';

export type OperatorToken = { token: string /** true when this start generated it */; created: boolean };

/**
 * The operator token comes from OPERATOR_TOKEN; when unset, it is generated once and kept in
 * `<dataDir>/operator-token` (mode 600), so it survives restarts.
 */
export async function resolveOperatorToken(fromEnv: string | undefined, dataDir: string): Promise<OperatorToken> {
  if (fromEnv) return { token: fromEnv, created: false };
  const file = path.join(dataDir, 'operator-token');
  try {
    const stored = (await readFile(file, 'utf8')).trim();
    if (stored) return { token: stored, created: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dataDir, { recursive: true });
  const token = newSecret(OPERATOR_TOKEN_PREFIX);
  // 'wx' fails if another process created the file meanwhile; then read theirs.
  try {
    await writeFile(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
    return { token, created: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return { token: (await readFile(file, 'utf8')).trim(), created: false };
  }
}
