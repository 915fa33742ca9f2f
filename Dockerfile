# syntax=docker/dockerfile:1
# Stage 1: install production dependencies and type-check the sources with the dev toolchain.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY schemas ./schemas
COPY plugins ./plugins
COPY scripts ./scripts
RUN npx tsc -p tsconfig.build.json --noEmit && npm prune --omit=dev

# Stage 2: the runtime, as an unprivileged user. The sources run through tsx, as `npm start` does.
FROM node:20-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/src ./src
COPY --from=build /app/schemas ./schemas
COPY --from=build /app/plugins ./plugins
COPY openapi.yaml ./openapi.yaml
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s CMD node -e "fetch('http://127.0.0.1:3000/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
CMD ["node", "--import", "tsx", "src/server.ts"]
