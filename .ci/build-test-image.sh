#!/bin/sh
# Build the busybox test image the Docker tests use, from nothing (no registry,
# nothing pulled): a root filesystem holding a static busybox, imported with
# `docker import`. Takes well under a second.
#
#   .ci/build-test-image.sh [IMAGE]        (default: agentrig-test/busybox:latest)
#
# Needs: docker CLI + a running engine, and busybox-static (apt-get install -y
# --no-install-recommends busybox-static) or BUSYBOX=/path/to/static/busybox.
set -eu

IMAGE="${1:-${AGENTRIG_TEST_IMAGE:-agentrig-test/busybox:latest}}"
BUSYBOX="${BUSYBOX:-$(command -v busybox || true)}"

if [ -z "$BUSYBOX" ] || [ ! -x "$BUSYBOX" ]; then
    echo "build-test-image: no busybox found; install it: apt-get install -y --no-install-recommends busybox-static" >&2
    exit 1
fi
ROOT="$(mktemp -d)"
trap 'rm -rf "$ROOT"' EXIT

mkdir -p "$ROOT/bin" "$ROOT/etc" "$ROOT/tmp" "$ROOT/workspace" "$ROOT/home" "$ROOT/root" "$ROOT/proc" "$ROOT/dev" "$ROOT/sys"
chmod 1777 "$ROOT/tmp" "$ROOT/home"
cp "$BUSYBOX" "$ROOT/bin/busybox"
# one symlink per applet, made by busybox itself inside the new root
if ! chroot "$ROOT" /bin/busybox --install -s /bin; then
    echo "build-test-image: $BUSYBOX does not run in an empty root (not statically linked?); install busybox-static" >&2
    exit 1
fi
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$ROOT/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$ROOT/etc/group"

tar -C "$ROOT" -c . | docker import \
    -c 'ENV PATH=/bin' \
    -c 'WORKDIR /workspace' \
    -c 'CMD ["/bin/sh"]' \
    -m "agentrig test image (static busybox)" \
    - "$IMAGE" > /dev/null
echo "$IMAGE"
