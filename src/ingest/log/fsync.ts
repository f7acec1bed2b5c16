import { open, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Makes the entries of `dir` (files created, renamed or removed in it) durable. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Replaces `file` with `data` so that after a crash it holds either the old or the new content. */
export async function writeFileAtomically(file: string, data: string | Buffer): Promise<void> {
  const temporary = `${file}.tmp`;
  const handle = await open(temporary, 'w');
  try {
    await writeFile(handle, data);
    await handle.datasync();
  } finally {
    await handle.close();
  }
  await rename(temporary, file);
  await syncDirectory(path.dirname(file));
}
