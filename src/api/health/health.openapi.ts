import { PUBLIC, ROOT_SERVER, json, type Route } from '../openapi/building-blocks.js';
import { HealthResponse, ReadinessResponse } from './health.responses.js';

/** Liveness and readiness, outside /api/v1. */
export function registerHealthPaths(route: Route) {
  route({
    method: 'get',
    path: '/healthz',
    operationId: 'liveness',
    tags: ['Service'],
    summary: 'Liveness',
    servers: ROOT_SERVER,
    security: PUBLIC,
    responses: { 200: json('The process runs.', HealthResponse) },
  });

  route({
    method: 'get',
    path: '/readyz',
    operationId: 'readiness',
    tags: ['Service'],
    summary: 'Readiness of each dependency',
    servers: ROOT_SERVER,
    security: PUBLIC,
    responses: {
      200: json('Every dependency answers.', ReadinessResponse),
      503: json('A dependency is unavailable (`"unavailable"`).', ReadinessResponse),
    },
  });
}
