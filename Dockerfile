# meshcap as istio-init: an image whose entrypoint takes istio-iptables' flags.
# Build: docker build -t meshcap .   Run as the init container with NET_ADMIN and NET_RAW.
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build

FROM node:24-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends iptables iproute2 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/dist/meshcap.mjs /usr/local/lib/meshcap/meshcap.mjs
# UID 0 with NET_ADMIN is what istio-init needs; the proxy itself runs as 1337 in another container.
ENTRYPOINT ["node", "/usr/local/lib/meshcap/meshcap.mjs"]
CMD ["-p", "15001", "-z", "15006", "-u", "1337", "-m", "REDIRECT", "-i", "*", "-x", "", "-b", "*", "-d", "15090,15021,15020"]
