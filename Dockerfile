# syntax=docker/dockerfile:1
# Both stages run the exact Node that .nvmrc names (what CI runs); bump them together.
# Stage 1: compile the TypeScript sources to JavaScript with the dev toolchain, then drop dev dependencies.
FROM node:24.22.3-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY schemas ./schemas
COPY plugins ./plugins
COPY scripts ./scripts
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# Stage 2: the runtime, compiled JavaScript only, as the unprivileged `node` user.
FROM node:24.22.3-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/package.json ./package.json
# In the image `npm start` and `npm run rotate-keys` run the compiled code (there are no sources here).
# DATA_DIR holds the embedded database's journal and the sealed credentials: owner-only.
RUN npm pkg set scripts.start="exec node dist/src/server.js" scripts.rotate-keys="node dist/scripts/rotate-keys.js" \
 && mkdir -p /data && chown node:node /data && chmod 700 /data
USER node
VOLUME /data
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=3s --start-period=30s CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself is pid 1 and receives `docker stop`'s SIGTERM directly.
CMD ["node", "dist/src/server.js"]
