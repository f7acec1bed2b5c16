import { API_BASE } from '../api/client';
import { ApiFailure } from '../api/failure';
import { session } from './session';

export type DownloadProgress = { bytes: number; rows: number | null };

/**
 * Downloads an export the API streams (GET …/exports/…), reporting what has arrived so far: the
 * exports are streamed as they are read (docs/data-rights.md), so there is no length to show a
 * percentage of; bytes and rows received are what the owner can watch grow. The token travels in
 * the Authorization header, as for every call, never in a URL, which is why the page fetches the
 * file itself instead of linking to it. Rows are counted for JSON lines, one row a line; a CSV
 * line is not always a row (a quoted text may hold a line break) and Parquet is binary, so those
 * report bytes only.
 */
export async function streamedDownload(
  path: string,
  options: { countRows: boolean; signal: AbortSignal; onProgress: (progress: DownloadProgress) => void },
): Promise<{ blob: Blob; fileName: string; progress: DownloadProgress }> {
  const token = session.token();
  let response: Response;
  try {
    response = await fetch(`${API_BASE}${path}`, {
      headers: token ? { Authorization: `Bearer ${token}` } : {},
      signal: options.signal,
    });
  } catch (error) {
    if (options.signal.aborted) throw error;
    throw ApiFailure.network(error);
  }
  if (!response.ok || !response.body) {
    const body: unknown = await response.json().catch(() => undefined);
    if (response.status === 401 && token) session.expire();
    throw ApiFailure.fromResponse(response, body);
  }
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  const progress: DownloadProgress = { bytes: 0, rows: options.countRows ? 0 : null };
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value as Uint8Array<ArrayBuffer>);
    progress.bytes += value.byteLength;
    if (progress.rows !== null) progress.rows += countNewlines(value);
    options.onProgress({ ...progress });
  }
  const type = response.headers.get('content-type') ?? 'application/octet-stream';
  return { blob: new Blob(chunks, { type }), fileName: fileNameOf(response) ?? 'export', progress };
}

function countNewlines(bytes: Uint8Array): number {
  let count = 0;
  for (const byte of bytes) if (byte === 10) count++;
  return count;
}

function fileNameOf(response: Response): string | null {
  const disposition = response.headers.get('content-disposition') ?? '';
  return /filename="([^"]+)"/.exec(disposition)?.[1] ?? null;
}

/** Hands a finished download to the browser as a file, through an object URL (no data: URL, no new tab). */
export function saveFile(blob: Blob, fileName: string) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // The click has started the download; the URL is not needed past this task.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
