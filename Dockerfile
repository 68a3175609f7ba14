# Herald: the whole service (HTTP API, admin panel, dispatcher) in one container.
#   docker build -t herald .
#   docker run --init -p 3000:3000 -v herald-data:/data -e PUBLIC_URL=https://herald.example.com herald
# The CLI is the same image: docker run --rm -v herald-data:/data herald account create --name Acme
# (or `docker compose exec herald bin/herald ...` beside a running server). compose.yaml runs
# it with PostgreSQL and an SMTP catcher.

ARG NODE_IMAGE=node:20-bookworm-slim

# Build: dev dependencies, the native SQLite driver (compiled when no prebuilt binary fits),
# TypeScript and the admin panel; then only the production dependencies are kept.
FROM ${NODE_IMAGE} AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 make g++ \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# `prepare` builds the sources, which are not copied yet: scripts run after the COPY below.
RUN npm ci --ignore-scripts && npm rebuild better-sqlite3 esbuild
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev --ignore-scripts

# Run: no compilers, no dev dependencies, not root.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
# DATA_DIR holds the SQLite file and the generated secret: owned by the user Herald runs as,
# readable by nobody else.
RUN mkdir -p /data && chown node:node /data && chmod 700 /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 CMD ["node", "bin/healthcheck"]
# node itself is the process that gets `docker stop`'s SIGTERM (no npm, no shell): it stops
# gracefully. Run with --init (compose.yaml: init: true) so a signal during start-up is not
# ignored by a PID 1 that has no handler yet. Arguments replace CMD: any bin/herald command.
ENTRYPOINT ["node", "bin/herald"]
CMD ["serve", "--role", "all"]
