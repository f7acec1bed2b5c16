import { type Logger, pino } from 'pino';

export type { Logger };

export function createLogger(level: string): Logger {
  return pino({
    level,
    // Secrets must never reach a log line, whatever object a caller passes.
    redact: {
      paths: ['req.headers["x-api-key"]', 'req.headers.authorization', '*.api_key', '*.admin_token', '*.token', 'api_key', 'admin_token'],
      censor: '[redacted]',
    },
  });
}
