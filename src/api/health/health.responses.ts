import { z } from 'zod';

// Health (outside /api/v1)

const check = z.enum(['ok', 'unavailable']);

export const HealthResponse = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });

export const ReadinessResponse = z
  .object({
    status: z.enum(['ok', 'unavailable']),
    checks: z.object({
      postgres: check,
      clickhouse: check,
      redis: check.optional().meta({ description: 'Present only when Redis is configured.' }),
    }),
  })
  .meta({ id: 'Readiness' });
