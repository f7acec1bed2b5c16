import { FeedbackClient, type FeedbackOptions, type FetchLike, nodeDefaults } from '../../sdk/dist/node.js';

/*
 * The SDK as an app in Node uses it: the built package (sdk/dist, made by `npm install`'s prepare
 * or `npm run build:sdk`), with a fetch that records what went over the wire.
 */

export type SentRequest = { url: string; method: string; headers: Record<string, string>; bytes: number; status?: number; at: number };

/** The platform's fetch, recording each request and its answer's status. */
export function recordingFetch(): { fetch: FetchLike; sent: SentRequest[] } {
  const sent: SentRequest[] = [];
  const fetch: FetchLike = async (url, init) => {
    const record: SentRequest = {
      url,
      method: init.method,
      headers: Object.fromEntries(Object.entries(init.headers).map(([k, v]) => [k.toLowerCase(), v])),
      bytes: typeof init.body === 'string' ? Buffer.byteLength(init.body) : (init.body?.byteLength ?? 0),
      at: Date.now(),
    };
    sent.push(record);
    const response = await globalThis.fetch(url, init as RequestInit);
    record.status = response.status;
    return response;
  };
  return { fetch, sent };
}

/** A client of the service at `host`, with the SDK's Node defaults and `options` on top. */
export function sdkClient(host: string, apiKey: string, options: Partial<FeedbackOptions> = {}): FeedbackClient {
  return new FeedbackClient({ host, apiKey, ...options }, nodeDefaults);
}
