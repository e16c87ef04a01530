# syntax=docker/dockerfile:1
# lock-service: build the TypeScript in one stage, run the compiled service with production
# dependencies only in another. Node 24 (LTS); the code itself supports Node 20 and later.

# ── build ───────────────────────────────────────────────────────────────────────────────────────
FROM node:24-bookworm-slim AS build
WORKDIR /app
# lockctl (src/cli) imports @lock-service/client, a file: dependency that npm links to clients/typescript.
COPY package.json package-lock.json ./
COPY clients/typescript/package.json ./clients/typescript/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY clients/typescript/tsconfig.json ./clients/typescript/
COPY clients/typescript/src ./clients/typescript/src
COPY scripts ./scripts
COPY src ./src
# tsc → clients/typescript/dist/ and dist/, then scripts/copy-assets.mjs copies src/lua → dist/lua
RUN npm run build

# ── runtime ─────────────────────────────────────────────────────────────────────────────────────
FROM node:24-bookworm-slim AS runtime
# Every variable here is one src/config.ts reads (a test checks it).
ENV PORT=8080 \
    HOST=0.0.0.0
WORKDIR /app
COPY package.json package-lock.json ./
COPY clients/typescript/package.json ./clients/typescript/
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
# dist/ includes dist/lua; the app serves ../openapi.yaml relative to dist/app.js, i.e. /app/openapi.yaml
COPY --from=build /app/dist ./dist
# The client library lockctl runs on (node_modules/@lock-service/client links here).
COPY --from=build /app/clients/typescript/dist ./clients/typescript/dist
COPY openapi.yaml ./
# Files stay root-owned and read-only to the service; it runs as the image's unprivileged `node` user.
USER node
EXPOSE 8080
# Healthy = can grant: /readyz is 200 only while a majority of the Redis nodes answers and may vote
# (a container whose Redis is unreachable is unhealthy). No curl in slim images: a node script
# (src/healthcheck.ts) that asks PROBE_PORT when set, else PORT over HTTP or HTTPS as the service serves.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "dist/healthcheck.js"]
CMD ["node", "--max-semi-space-size=32", "dist/server.js"]
