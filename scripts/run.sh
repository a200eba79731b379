#!/usr/bin/env bash
# Quick start: installs what is missing, builds, and projects the bundled sample report the way
# a parent agent would see it under the subagent/wait cap (16 KiB, 600 lines).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${HANDOFF_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh" >/dev/null
exec "$build/client/handoff" project "$root/samples/long-report.md" --max-bytes 16384 --max-lines 600 "$@"
