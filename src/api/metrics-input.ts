import type { z } from 'zod';
import { MetricsError } from '../olap/metrics/metrics.errors.js';
import { describeIssue, type RawQuery, readQuery } from './validation.js';

/*
 * The input refusals of the metrics family (the metrics API and the insights routes that share
 * its planner): 400 `METRICS_INVALID_PARAMETER` in the metrics error body (SPEC 7.2), naming the
 * parameter or field, where the other routes answer the SPEC 7.1 body (validation.ts).
 */

/**
 * Validates query parameters against an object schema whose keys are the documented names (either
 * casing, each at most once: readQuery). A refusal names the parameter: `limit must be an integer
 * from 1 to 1000`.
 */
export function parseMetricsQuery<T extends z.ZodObject>(schema: T, query: RawQuery): z.infer<T> {
  const input = readQuery(query, Object.keys(schema.shape), refuseParameter);
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw refuseParameter(String(issue?.path[0] ?? 'query'), issue?.message ?? 'is invalid');
}

function refuseParameter(name: string, problem: string): MetricsError {
  return new MetricsError('METRICS_INVALID_PARAMETER', `${name} ${problem}`);
}

/** Validates a JSON body; a refusal names the field, as validation.ts's parseBody does. */
export function parseMetricsBody<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new MetricsError('METRICS_INVALID_PARAMETER', 'body: must be a JSON object');
  }
  const result = schema.safeParse(body);
  if (!result.success) throw new MetricsError('METRICS_INVALID_PARAMETER', describeIssue(result.error, body));
  return result.data;
}
