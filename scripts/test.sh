#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every registered test.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${HANDOFF_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh"
ctest --test-dir "$build" --output-on-failure --timeout 600 -j2
