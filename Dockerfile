# The backend image that BACKEND_IMAGE names. Runs as the non-root user 10001 the chart's security
# context expects, writes only to DATA_DIR and /tmp (both volumes in the chart), so the root
# filesystem can be read-only.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY configs configs
COPY service service
COPY charts charts
COPY app app
COPY scripts scripts
COPY test/harness test/harness
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production PORT=8080 DATA_DIR=/var/lib/svc-ai-search
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/build build
USER 10001:10001
EXPOSE 8080
CMD ["node", "build/service/main.js"]
