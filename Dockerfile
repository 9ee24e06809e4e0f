# meshcap: istio-init (and the CNI plugin's payload) as a small image of self-contained executables.
#
#   podman build -t meshcap .                                    # default: public Debian slim base
#   podman build --build-arg BASE=localhost/debian:bookworm .    # any Debian-like base you have
#
# The runtime stage needs no Node, npm or shell at run time: the entrypoint is the executable itself.
# It runs as root only because NET_ADMIN/NET_RAW (iptables, ip rule) need it; run it with exactly those caps.

ARG BASE=debian:bookworm-slim
ARG BUILDER=node:24-bookworm-slim
# Where the executables come from: the `build` stage, or `prebuilt` (dist/bin from the build context, for
# hosts that cannot pull a Node image; the image test uses it).
ARG BINS_FROM=build

FROM ${BUILDER} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
COPY cni ./cni
RUN npm run build:bin

FROM scratch AS prebuilt
COPY dist/bin/meshcap /src/dist/bin/

FROM ${BINS_FROM} AS bins

FROM ${BASE} AS runtime
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="meshcap" \
      org.opencontainers.image.description="Service-mesh traffic-capture rules (istio-iptables compatible sidecar, Istio ambient in-pod, CNI plugin)" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://example.invalid/meshcap"
# iptables with both backends (iptables-legacy*, iptables-nft*), iproute2 (ip rule/route), ipset (ambient
# host side), util-linux (nsenter). Installed only if the base lacks them.
RUN set -e; \
    if ! command -v iptables-legacy-restore >/dev/null || ! command -v iptables-nft-restore >/dev/null \
       || ! command -v ip >/dev/null || ! command -v ipset >/dev/null || ! command -v nsenter >/dev/null; then \
      apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends iptables iproute2 ipset util-linux \
      && rm -rf /var/lib/apt/lists/*; \
    fi
COPY --from=bins /src/dist/bin/meshcap /usr/local/bin/meshcap
# One binary, three names: istio-init's command is `istio-iptables …`; the CNI plugin is `meshcap-cni`.
RUN ln -s meshcap /usr/local/bin/istio-iptables && ln -s meshcap /usr/local/bin/meshcap-cni
USER 0
ENTRYPOINT ["/usr/local/bin/meshcap"]
CMD ["-p", "15001", "-z", "15006", "-u", "1337", "-m", "REDIRECT", "-i", "*", "-x", "", "-b", "*", "-d", "15090,15021,15020"]
