#!/usr/bin/env bash
# Runs the real-Claude-Code suites (tests/claude-code: `claude -p`, and the terminal UI under
# tmux) against another release of Claude Code than the pinned one:
#
#   scripts/claude-code-version.sh 2.1.335            # both suites
#   scripts/claude-code-version.sh 2.1.335 claude-code.test.mjs   # one of them
#
# The release is installed with npm into the project-local .tools/claude-code-VERSION (never
# globally), handoff is built first, and the suites run as ctest runs them (HANDOFF_CLAUDE_CODE
# names that release's `claude`). docs/claude-code.md says which releases are proven.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${HANDOFF_BUILD_DIR:-$root/build}"
version="${1:?usage: scripts/claude-code-version.sh VERSION [SUITE.test.mjs ...]}"
shift
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "claude-code-version.sh: not a release: $version" >&2; exit 2; }
suites=("$@")
[[ ${#suites[@]} -gt 0 ]] || suites=(claude-code.test.mjs interactive.test.mjs)
dir="$root/.tools/claude-code-$version"
claude="$dir/node_modules/.bin/claude"
if [[ ! -x "$claude" ]] || [[ "$("$claude" --version 2>/dev/null)" != "$version (Claude Code)" ]]; then
  mkdir -p "$dir"
  [[ -f "$dir/package.json" ]] || echo '{"private": true}' > "$dir/package.json"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@anthropic-ai/claude-code@$version" >&2
fi
echo "claude-code-version.sh: $("$claude" --version)" >&2
"$root/scripts/build.sh" >/dev/null
command -v tmux >/dev/null || { echo "claude-code-version.sh: the terminal-UI suite needs tmux (scripts/setup.sh installs it)" >&2; exit 1; }
status=0
for suite in "${suites[@]}"; do
  HANDOFF_CLAUDE_CODE="$claude" HANDOFF_AUTOSTART=0 HANDOFFD="$build/daemon/handoffd" HANDOFF_CLI="$build/client/handoff" \
    node --test "$root/tests/claude-code/$suite" || status=$?
done
exit "$status"
