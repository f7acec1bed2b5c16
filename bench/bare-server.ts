/**
 * The baseline of the /events/track figure, forked by bench/ingest.ts: the same koa,
 * koa-bodyparser and @koa/router setup as src/api/app.ts (same body-parser options, the same
 * per-path body limit, the same /api/v1 prefix), with a POST /api/v1/events/track route that
 * answers the JSON the real route would answer (SPEC 2.7 Tracked event) and does nothing else:
 * no auth, no validation, no logging, no queue, no ClickHouse.
 */

import type { AddressInfo } from 'node:net';
import { Router } from '@koa/router';
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';
import type { ReadyMessage } from './protocol.js';

const PREFIX = '/api/v1';
const FIXED_ID = '0190a6e2-7c1e-7b4a-9d5f-3c2b1a0e9f87';
const FIXED_TIME = new Date('2026-01-31T12:00:00.000Z').toISOString();

const app = new Koa({ proxy: false });
app.silent = true;
const jsonBody = (limit: string) => bodyParser({ enableTypes: ['json'], jsonLimit: limit, strict: true });
const batchBody = jsonBody('5mb');
const defaultBody = jsonBody('1mb');
app.use((ctx, next) => (ctx.path === `${PREFIX}/events/batch` ? batchBody(ctx, next) : defaultBody(ctx, next)));

const router = new Router({ prefix: PREFIX });
router.post('/events/track', (ctx) => {
  const body = ctx.request.body as { eventName?: string; userId?: string; properties?: Record<string, unknown> };
  ctx.body = {
    id: FIXED_ID,
    event_name: body.eventName,
    user_id: body.userId,
    properties: body.properties ?? null,
    created_at: FIXED_TIME,
  };
});
app.use(router.routes());

const server = app.listen(0, '127.0.0.1', () => {
  process.send?.({ ready: true, port: (server.address() as AddressInfo).port } satisfies ReadyMessage);
});
process.on('disconnect', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
