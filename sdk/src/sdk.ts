import { FeedbackClient, type FeedbackOptions, type PlatformDefaults } from './client.js';

/**
 * The module-level API (`init`, then `track`, `identify`, … on the one client it made) of an
 * entry point, over that platform's defaults. Apps that need two clients use `new FeedbackClient`.
 */
export function singletonApi(platform: () => PlatformDefaults) {
  let client: FeedbackClient | undefined;
  const current = (): FeedbackClient => {
    if (!client) throw new Error('feedback SDK: call init({ apiKey, host }) first');
    return client;
  };
  return {
    /** Creates the client (once: a second init returns the first client). */
    init(options: FeedbackOptions): FeedbackClient {
      client ??= new FeedbackClient(options, platform());
      return client;
    },
    identify: ((...args) => current().identify(...args)) as FeedbackClient['identify'],
    track: ((...args) => current().track(...args)) as FeedbackClient['track'],
    flush: (() => current().flush()) as FeedbackClient['flush'],
    async shutdown(timeoutMs?: number): Promise<void> {
      const closing = client;
      client = undefined;
      await closing?.shutdown(timeoutMs);
    },
    listFeedback: ((...args) => current().listFeedback(...args)) as FeedbackClient['listFeedback'],
    createFeedback: ((...args) => current().createFeedback(...args)) as FeedbackClient['createFeedback'],
    getFeedback: ((...args) => current().getFeedback(...args)) as FeedbackClient['getFeedback'],
    vote: ((...args) => current().vote(...args)) as FeedbackClient['vote'],
    unvote: ((...args) => current().unvote(...args)) as FeedbackClient['unvote'],
    listComments: ((...args) => current().listComments(...args)) as FeedbackClient['listComments'],
    addComment: ((...args) => current().addComment(...args)) as FeedbackClient['addComment'],
  };
}
