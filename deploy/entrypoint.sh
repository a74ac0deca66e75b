#!/bin/sh
# The image's entrypoint: the first argument names the component to run.
#
#   mithril-entrypoint gateway            -> exec mithril serve gateway
#   mithril-entrypoint scanner            -> exec mithril serve scanner   (and so on)
#   mithril-entrypoint mithril scan TEXT  -> any other command runs as given
#
# `exec` makes the component PID 1's replacement, so SIGTERM reaches it directly: it turns
# its gRPC health to NOT_SERVING, drains for its grace period, and exits.
set -eu

# Kept equal to mithril/cli/components.py COMPONENTS (tests/unit/deploy checks it).
COMPONENTS="scanner secrets embedding judge reputation memory-gate gateway"

usage() {
    echo "usage: <image> COMPONENT | COMMAND [ARG...]" >&2
    echo "components: $COMPONENTS" >&2
}

if [ "$#" -eq 0 ]; then
    usage
    exit 64
fi

case "$1" in
    scanner | secrets | embedding | judge | reputation | memory-gate | gateway)
        if [ "$#" -ne 1 ]; then
            echo "mithril-entrypoint: a component takes no arguments; configure it with MITHRIL_* variables" >&2
            exit 64
        fi
        exec mithril serve "$1"
        ;;
    -h | --help | help)
        usage
        exit 0
        ;;
esac

if command -v "$1" >/dev/null 2>&1; then
    exec "$@"
fi
echo "mithril-entrypoint: unknown component or command: $1" >&2
usage
exit 64
