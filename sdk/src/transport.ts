import { parseRetryAfter } from './backoff.js';
import { FeedbackApiError, FeedbackNetworkError } from './errors.js';

/** The part of a fetch Response the SDK reads. */
export type ResponseLike = { status: number; headers: { get(name: string): string | null }; text(): Promise<string> };
/** The part of WHATWG fetch the SDK uses: the platform's own, or any compatible one. */
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string | Uint8Array; keepalive?: boolean; signal?: unknown },
) => Promise<ResponseLike>;
/** Gzips a request body, or answers undefined when the platform cannot (the body then goes plain). */
export type Compressor = (text: string) => Promise<Uint8Array | undefined>;

export type RequestOptions = {
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  userId?: string;
  /** Gzip the body when a compressor is configured and the body is worth it. */
  gzip?: boolean;
  /** Survives the page's unload (fetch keepalive); such a body must stay under 64 KB. */
  keepalive?: boolean;
};

/** Bodies smaller than this go plain: gzip's header and the work cost more than they save. */
const GZIP_MIN_BYTES = 1024;

/**
 * One HTTP exchange with the service: the key and user headers, JSON (gzipped when asked), a
 * timeout, and every failure turned into FeedbackApiError (an answer that is not 2xx) or
 * FeedbackNetworkError (no answer).
 */
export function createTransport(config: { host: string; apiKey: string; fetch: FetchLike; compress?: Compressor; timeoutMs: number }) {
  const base = `${config.host.replace(/\/+$/, '')}/api/v1`;
  return async function request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const headers: Record<string, string> = { 'X-API-Key': config.apiKey };
    if (options.userId) headers['X-User-Id'] = options.userId;
    let body: string | Uint8Array | undefined;
    if (options.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(options.body);
      if (options.gzip && config.compress && body.length >= GZIP_MIN_BYTES) {
        const gzipped = await config.compress(body);
        if (gzipped) {
          body = gzipped;
          headers['Content-Encoding'] = 'gzip';
        }
      }
    }
    let url = base + path;
    const query = Object.entries(options.query ?? {}).filter(([, value]) => value !== undefined);
    if (query.length > 0) url += `?${query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join('&')}`;

    const controller = typeof AbortController === 'function' ? new AbortController() : undefined;
    const timer = controller ? setTimeout(() => controller.abort(), config.timeoutMs) : undefined;
    let response: ResponseLike;
    let text: string;
    try {
      response = await config.fetch(url, { method, headers, body, keepalive: options.keepalive, signal: controller?.signal });
      text = await response.text();
    } catch (error) {
      throw new FeedbackNetworkError(`${method} ${path}: no answer (${error instanceof Error ? error.message : String(error)})`, error);
    } finally {
      clearTimeout(timer);
    }
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined; // a proxy's HTML error page, say: the status speaks for it
    }
    if (response.status >= 200 && response.status < 300) return parsed as T;
    throw new FeedbackApiError(response.status, parsed as FeedbackApiError['body'], parseRetryAfter(response.headers.get('Retry-After')));
  };
}

export type Request = ReturnType<typeof createTransport>;
