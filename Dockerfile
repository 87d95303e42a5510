# syntax=docker/dockerfile:1
#
# Netwarden: `netwarden serve` by default (API, web UI and a worker in one process).
# The same image runs `serve --no-worker`, `worker` and `agent`: give the command after the image
# name (docker run … netwarden worker --name w1). See docs/deployment.md, which also says why
# scanning containers run as root with NET_RAW/NET_ADMIN and host networking.
#
# Not built on the development machine (it has no access to Docker Hub); kept simple and
# conventional on purpose.

# ---- build: dependencies with dev tools, then the server (dist/) and the web UI (dist/web/) ----
FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 ships prebuilt binaries for linux x64/arm64; elsewhere npm ci compiles it.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY . .
# `npm ci` runs the package's `prepare` script, which is `npm run build`: the dev dependencies
# (TypeScript, Vite) must be installed for it, so never `npm ci --omit=dev` here (its `prepare`
# would fail). `npm prune` runs no script of the package: it only removes the dev dependencies.
RUN npm ci \
  && test -f dist/cli/main.js \
  && test -f dist/web/index.html \
  && npm prune --omit=dev \
  && npm cache clean --force

# ---- runtime ----
FROM node:20-bookworm-slim
# nmap: the primary scan engine (without it Netwarden uses its built-in TCP-connect engine).
# iproute2: `ip` for looking at interfaces and neighbours from inside the container.
RUN apt-get update \
  && apt-get install -y --no-install-recommends nmap iproute2 ca-certificates \
  && rm -rf /var/lib/apt/lists/*
RUN groupadd --system netwarden \
  && useradd --system --gid netwarden --home-dir /var/lib/netwarden --shell /usr/sbin/nologin netwarden \
  && install -d -o netwarden -g netwarden -m 0700 /var/lib/netwarden

ENV NODE_ENV=production \
  NETWARDEN_DATA_DIR=/var/lib/netwarden \
  NETWARDEN_HOST=0.0.0.0 \
  NETWARDEN_PORT=8080

WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist ./dist
COPY --from=build /app/data/cve ./data/cve
COPY --from=build /app/node_modules ./node_modules

# An unprivileged user by default: enough for `serve --no-worker` and for connect scans. nmap's
# SYN scan, ARP discovery (MAC addresses) and OS detection need raw sockets: run scanning
# containers as root with cap_add NET_RAW and NET_ADMIN, and host networking to see the LAN.
USER netwarden
VOLUME ["/var/lib/netwarden"]
EXPOSE 8080

# `netwarden worker` and `netwarden agent` serve no HTTP: switch this off for them
# (compose: healthcheck: disable: true).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.NETWARDEN_PORT || 8080) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

ENTRYPOINT ["node", "bin/netwarden.js"]
CMD ["serve"]
