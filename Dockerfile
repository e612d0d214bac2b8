# The bridge's image: only the bridge (the agents' sandbox image is separate, see sandbox/).
#
#   docker build -t roundtable .          # needs BuildKit: the default since Docker 23;
#                                         # Debian 12 (docker.io 20.10): DOCKER_BUILDKIT=1 docker build ...
#   docker compose up -d                  # see compose.yaml and docs/deploying.md
#
# Stage `build` installs every dependency (with a toolchain for better-sqlite3), compiles the
# TypeScript and prunes the dev tools away; the final stage holds node, dist/ and the production
# node_modules and runs as the unprivileged `node` user (uid 1000).
#
# Build arguments:
#   NODE_IMAGE  the Node 20 base of both stages (default node:20-bookworm-slim)
#   APP_FROM    where the final stage takes dist/ and node_modules/ from: `build` (default), or
#               `prebuilt`: an already built dist/ and production node_modules/ in the build context,
#               so nothing is downloaded during the build (CI builds it offline this way).
ARG NODE_IMAGE=node:20-bookworm-slim
ARG APP_FROM=build

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# For better-sqlite3 when no prebuilt binary can be fetched.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY adapters ./adapters
COPY sandbox ./sandbox
RUN npm run build && npm prune --omit=dev

FROM scratch AS prebuilt
COPY dist /app/dist
COPY node_modules /app/node_modules

FROM ${APP_FROM} AS app

FROM ${NODE_IMAGE} AS runtime
WORKDIR /app
# package.json marks dist/ as ES modules and is where the bridge finds its run-time files.
COPY package.json package-lock.json ./
COPY migrations ./migrations
COPY agents ./agents
COPY sandbox/runner.py ./sandbox/runner.py
COPY sandbox/demo-workspace ./sandbox/demo-workspace
# The web room's page: plain files the bridge serves as they are (WEB_PORT).
COPY adapters/web/public ./adapters/web/public
COPY --from=app /app/dist ./dist
COPY --from=app /app/node_modules ./node_modules
RUN mkdir -p /data && chown node:node /data
ENV NODE_ENV=production \
    DATA_DIR=/data \
    HEALTH_PORT=8080 \
    HEALTH_HOST=0.0.0.0
USER node
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.HEALTH_PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "dist/src/main.js"]
