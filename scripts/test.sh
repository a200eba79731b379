#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every registered test.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${HANDOFF_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh"
# The TypeScript client's dependencies, pinned by its lock file.
npm ci --prefix "$root/client/pi" --no-audit --no-fund --loglevel=error >/dev/null
# Node 22 for the real-Pi tests (Pi 1.6.0 needs it), project-local.
"$root/scripts/node22.sh" >/dev/null
# The peers the pi-subagents bridge is tested with (pi-subagents 0.67.0, Pi 0.85.1), pinned.
npm ci --prefix "$root/client/pi/test/peers" --no-audit --no-fund --loglevel=error >/dev/null
# The real Claude Code the hook tests run (2.1.332, native binary), and the previous proven
# release for the `claude -p` suite (2.1.328), pinned, project-local.
npm ci --prefix "$root/tests/claude-code" --no-audit --no-fund --loglevel=error >/dev/null
npm ci --prefix "$root/tests/claude-code/previous" --no-audit --no-fund --loglevel=error >/dev/null
# The real Codex CLI the MCP server tests run (0.171.0, native binary), and the previous proven
# release for its setup and MCP suites (0.169.0), pinned, project-local.
npm ci --prefix "$root/tests/codex" --no-audit --no-fund --loglevel=error >/dev/null
npm ci --prefix "$root/tests/codex/previous" --no-audit --no-fund --loglevel=error >/dev/null
# The real Gemini CLI the AfterTool hook tests run (0.61.0, pure JS), pinned, project-local.
npm ci --prefix "$root/tests/gemini" --no-audit --no-fund --loglevel=error >/dev/null
# The real opencode the plugin tests run (1.18.33, native binary), pinned, project-local.
npm ci --prefix "$root/tests/opencode" --no-audit --no-fund --loglevel=error >/dev/null
# The real Kilo Code CLI (an opencode fork) the plugin is also tested in (7.7.9, native binary),
# pinned, project-local.
npm ci --prefix "$root/tests/kilo" --no-audit --no-fund --loglevel=error >/dev/null
# The real cline CLI the plugin tests run (3.0.65, its compiled binary), pinned, project-local.
npm ci --prefix "$root/tests/cline" --no-audit --no-fund --loglevel=error >/dev/null
# The real GitHub Copilot CLI the subagentStop hook tests run (1.0.102, native binary), pinned,
# project-local.
npm ci --prefix "$root/tests/copilot" --no-audit --no-fund --loglevel=error >/dev/null
ctest --test-dir "$build" --output-on-failure --timeout 600 -j2
# Every libFuzzer target for a short run (HANDOFF_FUZZ_SECONDS each; scripts/fuzz.sh).
"$root/scripts/fuzz.sh" "${HANDOFF_FUZZ_SECONDS:-30}"
