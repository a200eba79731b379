#!/usr/bin/env bash
# Runs a real-harness suite against another release of that harness than the pinned one:
#
#   scripts/harness-version.sh claude-code 2.1.335                          # every suite
#   scripts/harness-version.sh claude-code 2.1.335 interactive.test.mjs     # one of them
#   scripts/harness-version.sh codex 0.172.0
#
# The release is installed with npm into the project-local .tools/HARNESS-VERSION (never
# globally), handoff is built first, and the suites (tests/HARNESS/*.test.mjs) run as ctest runs
# them, the harness's binary named by the variable its harness.mjs reads. docs/claude-code.md and
# docs/codex.md say which releases are proven.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${HANDOFF_BUILD_DIR:-$root/build}"
usage="usage: scripts/harness-version.sh claude-code|codex VERSION [SUITE.test.mjs ...]"
harness="${1:?$usage}"
version="${2:?$usage}"
shift 2
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "harness-version.sh: not a release: $version" >&2; exit 2; }
dir="$root/.tools/$harness-$version"
case "$harness" in
  claude-code)
    package="@anthropic-ai/claude-code"; variable=HANDOFF_CLAUDE_CODE
    binary="$dir/node_modules/.bin/claude"; says="$version (Claude Code)" ;;
  codex)
    package="@openai/codex"; variable=CODEX_BIN
    binary="$dir/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"; says="codex-cli $version" ;;
  *) echo "harness-version.sh: no such harness: $harness ($usage)" >&2; exit 2 ;;
esac
suites=("$@")
if [[ ${#suites[@]} -eq 0 ]]; then
  for f in "$root/tests/$harness"/*.test.mjs; do suites+=("$(basename "$f")"); done
fi
if [[ ! -x "$binary" ]] || [[ "$("$binary" --version 2>/dev/null)" != "$says" ]]; then
  mkdir -p "$dir"
  [[ -f "$dir/package.json" ]] || echo '{"private": true}' > "$dir/package.json"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$package@$version" >&2
fi
echo "harness-version.sh: $("$binary" --version)" >&2
if ! built="$("$root/scripts/build.sh" 2>&1)"; then
  printf '%s\n' "$built" | tail -30 >&2
  echo "harness-version.sh: the build failed" >&2
  exit 1
fi
command -v tmux >/dev/null || { echo "harness-version.sh: the terminal-UI suites need tmux (scripts/setup.sh installs it)" >&2; exit 1; }
status=0
for suite in "${suites[@]}"; do
  env "$variable=$binary" HANDOFF_AUTOSTART=0 HANDOFFD="$build/daemon/handoffd" HANDOFF_CLI="$build/client/handoff" \
    node --test "$root/tests/$harness/$suite" || status=$?
done
exit "$status"
