#!/usr/bin/env bash
# Quick start: installs what is missing, builds, and runs handoffd in the foreground on the
# default socket ($XDG_RUNTIME_DIR/handoff/handoffd.sock, else the private fallback
# ${TMPDIR:-/tmp}/handoff-$UID/handoffd.sock: docs/configuration.md, "The socket"), the one every
# client finds by itself. Extra arguments go to handoffd (see `handoffd --help`).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${HANDOFF_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh" >/dev/null
cat >&2 <<MSG
handoffd starting on its default socket, named in its "listening on" log line (Ctrl-C stops it; nothing
acknowledged is lost). Talk to it from another shell of this user:
  $build/client/handoff doctor     # which socket, and why
  $build/client/handoff status
  echo "long report..." | $build/client/handoff complete --parent p --child c1 -
  $build/client/handoff wait --parent p c1
  $build/client/handoff project $root/samples/long-report.md   # the projection alone, offline
MSG
exec "$build/daemon/handoffd" "$@"
