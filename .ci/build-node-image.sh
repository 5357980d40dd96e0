#!/bin/sh
# Build the Debian + Node.js test image (the base of the claude_code agent's
# image in the Docker tests) from nothing: no registry, nothing pulled from
# Docker Hub. debootstrap makes a minimal bookworm root filesystem with nodejs,
# npm and ca-certificates from the Debian mirror apt already uses (plus the
# CAs added on this host, so npm behind an intercepting proxy works as on the
# host), and `docker import` turns it into an image. The minbase root is imported
# first, before Node.js goes in, as the plain Debian image (DEBIAN_IMAGE, default
# agentrig-test/debian:bookworm: a task image with no Node.js and no agent CLI, which
# the CLI agents' bundles run in): one debootstrap for both. Skipped when both exist.
#
#   .ci/build-node-image.sh [--force] [IMAGE]   (default: agentrig-test/node:bookworm)
#
# Needs: root (debootstrap chroots), debootstrap (apt-get install -y
# --no-install-recommends debootstrap), the docker CLI and a running engine.
# DEBIAN_MIRROR overrides the mirror; by default it is the one apt uses for bookworm.
set -eu

FORCE=""
if [ "${1:-}" = "--force" ]; then FORCE=1; shift; fi
IMAGE="${1:-${AGENTRIG_TEST_NODE_IMAGE:-agentrig-test/node:bookworm}}"
PLAIN_IMAGE="${DEBIAN_IMAGE:-${AGENTRIG_TEST_DEBIAN_IMAGE:-agentrig-test/debian:bookworm}}"
SUITE=bookworm

fail() { echo "build-node-image: $*" >&2; exit 1; }

command -v docker >/dev/null || fail "no docker CLI: apt-get install -y --no-install-recommends docker.io"
docker info >/dev/null 2>&1 || fail "no Docker engine answers: start it (dockerd --iptables=false --bridge=none &)"
has() { docker image inspect "$1" >/dev/null 2>&1; }
if [ -z "$FORCE" ] && has "$IMAGE" && has "$PLAIN_IMAGE"; then
    echo "$IMAGE, $PLAIN_IMAGE (exist; --force rebuilds them)"
    exit 0
fi
[ "$(id -u)" = 0 ] || fail "debootstrap needs root: run it with sudo"
command -v debootstrap >/dev/null || fail "no debootstrap: apt-get install -y --no-install-recommends debootstrap"

MIRROR="${DEBIAN_MIRROR:-}"
if [ -z "$MIRROR" ]; then
    # the mirror apt already fetches bookworm's packages from (no new host to reach)
    MIRROR="$(apt-get indextargets --format '$(REPO_URI) $(CODENAME) $(TARGET_OF)' 2>/dev/null \
        | awk -v suite="$SUITE" '$2 == suite && $3 == "deb" { print $1; exit }')"
fi
[ -n "$MIRROR" ] || fail "no Debian $SUITE mirror in apt's sources: set DEBIAN_MIRROR (e.g. http://deb.debian.org/debian)"

ROOT="$(mktemp -d /var/tmp/agentrig-node-root.XXXXXX)"
LOG="$ROOT.log"
trap 'rm -rf "$ROOT" "$LOG"' EXIT
trap 'exit 130' INT TERM

# minbase first, then apt inside the new root: debootstrap's own --include
# cannot configure npm's ~300 dependencies in one pass (it retries, then fails)
if ! debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR" > "$LOG" 2>&1; then
    tail -20 "$LOG" >&2
    fail "debootstrap $SUITE from $MIRROR failed (last lines above)"
fi
# the plain image: the minbase root as it is (no package caches or lists), before Node.js goes in
if [ -n "$FORCE" ] || ! has "$PLAIN_IMAGE"; then
    mkdir -p "$ROOT/workspace"
    chmod 1777 "$ROOT/tmp"
    tar --numeric-owner -C "$ROOT" --exclude='./var/cache/apt/archives/*.deb' --exclude='./var/lib/apt/lists/*' -c . \
        | docker import \
        -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        -c 'ENV LANG=C.UTF-8' \
        -c 'WORKDIR /workspace' \
        -c 'CMD ["/bin/bash"]' \
        -m "agentrig test image: Debian $SUITE minbase, no Node.js (debootstrap)" \
        - "$PLAIN_IMAGE" > /dev/null
    echo "$PLAIN_IMAGE"
fi
if [ -z "$FORCE" ] && has "$IMAGE"; then
    exit 0
fi
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"  # name resolution for apt in the chroot; emptied below
# The CAs this host's admin added (e.g. an egress proxy's) so npm in the image
# reaches the registry as the host does; ca-certificates' setup adds them to the store.
if [ -d /usr/local/share/ca-certificates ]; then
    mkdir -p "$ROOT/usr/local/share/ca-certificates"
    cp -R /usr/local/share/ca-certificates/. "$ROOT/usr/local/share/ca-certificates/"
fi
if ! chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
        sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends nodejs npm ca-certificates' \
        > "$LOG" 2>&1; then
    tail -20 "$LOG" >&2
    fail "installing nodejs, npm and ca-certificates in the $SUITE root from $MIRROR failed (last lines above)"
fi
: > "$ROOT/etc/resolv.conf"  # the engine provides a container's own

# what a container never needs: package caches and lists, logs
rm -rf "$ROOT"/var/cache/apt/*.bin "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/log/* \
    "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/*
mkdir -p "$ROOT/workspace"
chmod 1777 "$ROOT/tmp"

OLD_ID="$(docker image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)"
tar --numeric-owner -C "$ROOT" -c . | docker import \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    -c 'ENV LANG=C.UTF-8' \
    -c 'WORKDIR /workspace' \
    -c 'CMD ["/bin/bash"]' \
    -m "agentrig test image: Debian $SUITE minbase with nodejs and npm (debootstrap)" \
    - "$IMAGE" > /dev/null
if [ -n "$OLD_ID" ]; then
    docker image rm "$OLD_ID" > /dev/null 2>&1 || true  # the replaced build, unless something still uses it
fi
echo "$IMAGE"
