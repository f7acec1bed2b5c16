import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Counter, Histogram } from 'prom-client';
import { type Logger, requestLineLogger } from '../../core/logger.js';
import type { Telemetry } from '../../core/telemetry.js';
import type { InterfaceStatementKind } from '../../olap/readonly/interface-statement.js';
import type { StreamProgress } from '../../olap/readonly/readonly-session.js';
import type { ClickhouseHandler } from './ch-handler.js';

/*
 * One log line and the Prometheus figures of every request to the ClickHouse interface, on the API
 * port's /clickhouse and on the interface's own port (docs/clickhouse-interface.md, "Seen by an
 * operator"). The handler tells what only it knows (the credential, the statement's kind, the
 * stream's figures) through the note* functions, keyed by the response; everything else (status,
 * error code, query id) is read off the response when it is done. The query text is never logged:
 * its literals may be anyone's data; nor is the password, nor any header.
 */

/** What a statement was, as the log line and the counters name it. */
export type StatementKind = InterfaceStatementKind | 'refused' | 'ping' | 'none';

type Notes = {
  credentialId?: string;
  projectId?: string;
  kind?: StatementKind;
  progress?: StreamProgress;
};

const notes = new WeakMap<ServerResponse, Notes>();
const noted = (res: ServerResponse): Notes => {
  let mine = notes.get(res);
  if (!mine) {
    mine = {};
    notes.set(res, mine);
  }
  return mine;
};

/** The credential that authenticated the request, and its project. */
export function noteCredential(res: ServerResponse, credentialId: string, projectId: string): void {
  Object.assign(noted(res), { credentialId, projectId });
}

/** The statement's kind, from what the interface prepared to run (interface-statement.ts); answers it back. */
export function noteStatement<T extends { kind: StatementKind }>(res: ServerResponse, prepared: T): T {
  noted(res).kind = prepared.kind;
  return prepared;
}

/** The running statement's figures, filled as its output streams (read when the answer is done). */
export function noteProgress(res: ServerResponse, progress: StreamProgress): void {
  noted(res).progress = progress;
}

type InterfaceMetrics = { requests: Counter<'outcome' | 'kind'>; duration: Histogram<'outcome'> };
const metricsOf = new WeakMap<Telemetry, InterfaceMetrics>();

/** The interface's counters in the process's registry, made once per registry (tests build several apps). */
function interfaceMetrics(telemetry: Telemetry): InterfaceMetrics {
  let metrics = metricsOf.get(telemetry);
  if (!metrics) {
    metrics = {
      requests: new Counter({
        name: 'feedback_clickhouse_interface_requests_total',
        help: 'Requests to the ClickHouse interface, by outcome (ok, refused, failed, cancelled) and statement kind',
        labelNames: ['outcome', 'kind'] as const,
        registers: [telemetry.registry],
      }),
      duration: new Histogram({
        name: 'feedback_clickhouse_interface_request_duration_seconds',
        help: 'Time of a ClickHouse interface request until its answer was sent, by outcome',
        labelNames: ['outcome'] as const,
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
        registers: [telemetry.registry],
      }),
    };
    metricsOf.set(telemetry, metrics);
  }
  return metrics;
}

/** ok: a 2xx answered whole; refused: an answer with a ClickHouse error below 500; failed: 5xx; cancelled: the client left. */
function outcomeOf(res: ServerResponse, finished: boolean): 'ok' | 'refused' | 'failed' | 'cancelled' {
  if (!finished) return 'cancelled';
  if (res.statusCode >= 500) return 'failed';
  if (res.statusCode >= 400 || res.getHeader('x-clickhouse-exception-code') !== undefined) return 'refused';
  return 'ok';
}

const figure = (summary: Record<string, string> | undefined, name: string) => {
  const value = summary?.[name];
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : 0;
};

/**
 * The handler with its log line and figures: one line (`clickhouse interface request`) when the
 * answer is done or the client has gone.
 */
export function withInterfaceLog(handler: ClickhouseHandler, logger: Logger, telemetry: Telemetry | undefined): ClickhouseHandler {
  const lines = requestLineLogger(logger);
  const metrics = telemetry ? interfaceMetrics(telemetry) : undefined;
  return (req: IncomingMessage, res: ServerResponse, path: string) => {
    const started = performance.now();
    let logged = false;
    const done = (finished: boolean) => {
      if (logged) return;
      logged = true;
      const mine = notes.get(res) ?? {};
      const outcome = outcomeOf(res, finished);
      const code = res.getHeader('x-clickhouse-exception-code');
      // A statement refused (by the guard, the limits or the engine) is logged as a refusal, whatever it was.
      const kind: StatementKind =
        outcome === 'refused' ? 'refused' : (mine.kind ?? (path === '/ping' || req.method === 'HEAD' ? 'ping' : 'none'));
      const durationMs = performance.now() - started;
      metrics?.requests.inc({ outcome, kind });
      metrics?.duration.observe({ outcome }, durationMs / 1000);
      if (!lines.isLevelEnabled('info')) return;
      const server = mine.progress?.serverSummary;
      lines.info(
        {
          interface: 'clickhouse',
          port: req.socket.localPort,
          queryId: res.getHeader('x-clickhouse-query-id'),
          credentialId: mine.credentialId,
          projectId: mine.projectId,
          kind,
          outcome,
          // A client that left before the answer began got no status: Node's default 404 is not one.
          status: res.headersSent ? res.statusCode : null,
          errorCode: code === undefined ? undefined : Number(code),
          durationMs: Math.round(durationMs * 10) / 10,
          readRows: figure(server, 'read_rows'),
          readBytes: figure(server, 'read_bytes'),
          resultRows: mine.progress?.resultRows ?? 0,
          resultBytes: mine.progress?.resultBytes ?? 0,
        },
        'clickhouse interface request',
      );
    };
    res.once('finish', () => done(true));
    res.once('close', () => done(res.writableFinished));
    return handler(req, res, path);
  };
}
