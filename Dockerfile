# syntax=docker/dockerfile:1
# The service as compiled JavaScript, without dev dependencies. No Docker engine runs on the
# project's build machines, so this file is checked by reading, not by building: see the README.

FROM node:22-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 (the embedded engines, also used by the CLI) compiles from source when no
# prebuilt binary can be fetched.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
# Emits dist/src/**/*.js, copies the admin interface's CSS and script beside them, stamps the build.
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:22-bookworm-slim
ENV NODE_ENV=production \
    MALLOC_ARENA_MAX=2 \
    PORT=8080 \
    SVC_HOST=0.0.0.0 \
    SVC_DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY config ./config
RUN mkdir -p /data && chown node:node /data && chmod 0700 /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# SVC_ROLE=all (default), api or projector. No src/ here, so `npx svc …` (docker exec) runs dist/ too.
CMD ["node", "dist/src/main.js"]
