import http from 'node:http';
import https from 'node:https';
import { DeliveryError } from './errors.js';
import { assertPublicHost, BlockedAddressError, guardedLookup } from './ssrf.js';

export type PostOptions = {
  /** Limit of the whole attempt: name lookup, connect, request, answer. */
  timeoutMs: number;
  /** Skip the SSRF guard (ALLOW_PRIVATE_WEBHOOKS). */
  allowPrivate: boolean;
};

/** At most this much of an answer is read; it only goes into last_error. */
const MAX_ANSWER_BYTES = 16 * 1024;

/** 4xx answers that say "later", not "never". */
const RETRYABLE_4XX = new Set([408, 425, 429]);

/**
 * POSTs a JSON body and resolves when the receiver answers 2xx. Redirects are not followed (a
 * redirect could lead past the SSRF guard, and webhook receivers do not need them). Throws a
 * DeliveryError, permanent for refused addresses, bad URLs and 4xx answers other than 408/425/429.
 *
 * node:http rather than fetch: its `lookup` option is where the SSRF guard checks the address
 * the socket connects to, with no dependency beyond Node.
 */
export async function postJson(
  target: string,
  body: string,
  headers: Record<string, string>,
  options: PostOptions,
): Promise<{ status: number }> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new DeliveryError('invalid URL', true);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new DeliveryError(`unsupported URL scheme ${url.protocol}`, true);
  if (!options.allowPrivate) {
    try {
      assertPublicHost(url.hostname);
    } catch (error) {
      throw new DeliveryError((error as Error).message, true);
    }
  }
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers },
      ...(options.allowPrivate ? {} : { lookup: guardedLookup }),
      // A fresh connection per attempt: a pooled socket would skip the lookup (and the guard)
      // and could outlive a hanging receiver's timeout.
      agent: false,
    });
    const timer = setTimeout(() => {
      request.destroy(new DeliveryError(`no answer within ${options.timeoutMs} ms`, false));
    }, options.timeoutMs);
    const fail = (error: Error) => {
      clearTimeout(timer);
      if (error instanceof DeliveryError) return reject(error);
      if (error instanceof BlockedAddressError || (error as NodeJS.ErrnoException).code === 'ERR_BLOCKED_ADDRESS') {
        return reject(new DeliveryError(error.message, true));
      }
      reject(new DeliveryError(`${(error as NodeJS.ErrnoException).code ?? error.name}: ${error.message}`, false));
    };
    request.on('error', fail);
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        if (size < MAX_ANSWER_BYTES) chunks.push(chunk);
        size += chunk.length;
      });
      response.on('error', fail);
      response.on('end', () => {
        clearTimeout(timer);
        const status = response.statusCode ?? 0;
        if (status >= 200 && status < 300) return resolve({ status });
        const text = Buffer.concat(chunks).toString('utf8').slice(0, 300).replace(/\s+/g, ' ').trim();
        const permanent = status >= 300 && status < 500 && !RETRYABLE_4XX.has(status);
        const what = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
        reject(new DeliveryError(`HTTP ${status}${what}${text ? `: ${text}` : ''}`, permanent));
      });
    });
    request.end(body);
  });
}
