#!/usr/bin/env bash
# Quick start: installs what is missing, builds, and runs handoffd in the foreground on the
# default socket ($XDG_RUNTIME_DIR/handoff/handoffd.sock; /tmp/handoff-$UID when unset).
# Extra arguments go to handoffd (see `handoffd --help`).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${HANDOFF_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh" >/dev/null
if [[ -z "${XDG_RUNTIME_DIR:-}" ]]; then
  export XDG_RUNTIME_DIR="/tmp/handoff-$(id -u)"
  mkdir -p -m 0700 "$XDG_RUNTIME_DIR"
fi
sock="$XDG_RUNTIME_DIR/handoff/handoffd.sock"
cat >&2 <<MSG
handoffd starting on $sock (Ctrl-C stops it; nothing acknowledged is lost).
Talk to it from another shell:
  export XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR
  $build/client/handoff status
  echo "long report..." | $build/client/handoff complete --parent p --child c1 -
  $build/client/handoff wait --parent p c1
  $build/client/handoff project $root/samples/long-report.md   # the projection alone, offline
MSG
exec "$build/daemon/handoffd" "$@"
