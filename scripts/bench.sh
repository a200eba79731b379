#!/usr/bin/env bash
# Every benchmark of issues 6 and 13, in a Release build, printed as markdown tables of medians and
# ratios measured side by side in the same run (absolute times are not comparable between runs
# on a shared machine; the ratios are what docs/benchmarks.md quotes).
#
#   scripts/bench.sh [STEP...]      STEP: projection, outline, e2e, recovery, hook, mcp, autostart, soak
#                                   (default: projection e2e recovery)
#
#   projection  handoff's projection (bench/projection_bench.cpp, Google Benchmark) against a
#               memchr pass, an OpenSSL SHA-256 pass and Pi's own truncateHead + truncateTail
#               run by Node in-process (bench/pi_truncate.mjs) on byte-identical inputs
#   e2e         through the socket with a real daemon, load, memory: scripts/bench_e2e.sh. Load
#               puts completions/s under 8 clients next to the floor of one thread writing each
#               result as its own fsynced file on the same file system (target: at least 4x)
#   recovery    restart after a crash: a real daemon holds 10,000 results of 4-64 KiB and is
#               killed with SIGKILL, then is started 5 times (killed again each time) and timed
#               until its socket answers daemon/status and until status reports every result
#               held, against the floor: one thread reading every file under the queue
#               directory, with and without SHA-256 (bench/recovery_bench.cpp, through
#               scripts/bench_e2e.sh recovery). 2.5 to 4.5 minutes on this project's 2-core
#               machine at a load average of 8, nearly all of it making the 10,000 fsynced
#               completions
#   outline     the outline of the omitted middle (bench/outline_bench.cpp): of the headings of
#               long markdown documents written by others (every .md over 16 KiB with 10 headings
#               or more in the npm packages client/pi and its test peers pin), the share a parent
#               can reach at 16 KiB / 600 lines (shown, or listed at its line) with and without
#               the outline, what it costs the head and tail, and the projection's time
#   hook        the Claude Code hook (`handoff hook claude-code`) started per call as Claude
#               Code runs it, against a trivial C++ program reading stdin (a short answer: no
#               daemon call; target 2x) and against process start + SHA-256 + one fsync'd write
#               of the text (a 171 KB answer through a real handoffd; target 3x)
#   mcp         `handoff mcp` (Codex's MCP server) per tool call, a request line in to its
#               answer line out, against a bare MCP echo server in the same run (target 2x)
#   autostart   a client with no daemon running (client/lib/handoff/daemon_start.hpp), timed from
#               its first connect attempt to the answer to initialize + daemon/status, beside the
#               same calls to a running daemon and to one started by hand in the foreground,
#               on an empty queue and with 10,000 queued results (bench/autostart_bench.cpp;
#               HANDOFF_AUTOSTART_RESULTS, HANDOFF_AUTOSTART_ROUNDS)
#   soak        one daemon, many parent sessions in turn (bench/soak_bench.cpp): RSS, open fds
#               and known parents sampled as it goes must stay flat. Long: 32 min per
#               100,000 parents with HANDOFF_BENCH_DATA_DIR on a tmpfs, about 11 h on this
#               project's VM disk (fsync-bound); not in the default steps
#
# Each step builds what it needs and prints its own section. Environment:
#   HANDOFF_BENCH_BUILD_DIR    build directory (default build-bench/, never build/)
#   HANDOFF_BENCH_JOBS         build parallelism (default: the build tool's)
#   HANDOFF_BENCH_REPETITIONS  Google Benchmark repetitions the medians are taken over (10)
#   HANDOFF_SOAK_PARENTS       parent sessions of the soak (100000), sampled every tenth
#   HANDOFF_BENCH_QUICK=1      fewer rounds and results in e2e and recovery (a smoke test)
#   HANDOFF_BENCH_DATA_DIR     where the daemons' stores and queues go (default <build>/bench-data)
# Installs nothing beyond scripts/setup.sh and Pi's npm package (npm ci --prefix client/pi).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${HANDOFF_BENCH_BUILD_DIR:-$root/build-bench}"
results="$build/bench-results"
repetitions="${HANDOFF_BENCH_REPETITIONS:-10}"

configure() {
  "$root/scripts/setup.sh"
  # No tests here: build/ and the test scripts own them, and configuring them costs time.
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHANDOFF_BUILD_BENCH=ON \
    -DHANDOFF_BUILD_TESTS=OFF >/dev/null
  mkdir -p "$results"
}

# Quiet when it works; ninja prints compiler errors on stdout, so they are shown on failure.
build_targets() {
  cmake --build "$build" --parallel ${HANDOFF_BENCH_JOBS:-} --target "$@" >"$results/build.log" 2>&1 ||
    { cat "$results/build.log" >&2; return 1; }
}

step_projection() {
  build_targets handoff_bench_projection
  # Pi's package, pinned by client/pi's lock file; fetched only when it is not there yet.
  [[ -f $root/client/pi/node_modules/@earendil-works/pi-coding-agent/package.json ]] ||
    npm ci --prefix "$root/client/pi" --no-audit --no-fund --loglevel=error >/dev/null
  local bin="$build/bench/handoff_bench_projection" inputs="$results/projection-inputs"
  "$bin" --dump-inputs "$inputs"
  # Console output goes to logs (shown on failure); the table is built from the JSON files.
  "$bin" --benchmark_repetitions="$repetitions" --benchmark_report_aggregates_only=true \
    --benchmark_out="$results/projection.json" --benchmark_out_format=json \
    >"$results/projection.log" 2>&1 || { cat "$results/projection.log" >&2; return 1; }
  node "$root/bench/pi_truncate.mjs" "$inputs" >"$results/pi_truncate.json" \
    2>"$results/pi_truncate.log" || { cat "$results/pi_truncate.log" >&2; return 1; }

  echo "## Projection: handoff vs the floor and Pi"
  echo
  echo "One result delivered by \`subagent/wait\` (16 KiB / 600 lines), medians of wall time;"
  echo "\`scripts/bench.sh projection\`, $repetitions repetitions, $(date -u +%Y-%m-%d)."
  echo
  python3 "$root/bench/projection_table.py" "$results/projection.json" "$results/pi_truncate.json"
  echo
}

step_outline() {
  build_targets handoff_bench_outline
  local prefix
  for prefix in "$root/client/pi" "$root/client/pi/test/peers"; do
    [[ -d $prefix/node_modules ]] || npm ci --prefix "$prefix" --no-audit --no-fund --loglevel=error >/dev/null
  done
  echo "## The outline: headings a parent can reach"
  echo
  echo "\`scripts/bench.sh outline\`, $(date -u +%Y-%m-%d): the markdown documents of the pinned npm packages."
  echo
  find "$root/client/pi/node_modules" "$root/client/pi/test/peers/node_modules" -name '*.md' -size +16k | LC_ALL=C sort |
    xargs "$build/bench/handoff_bench_outline" >"$results/outline.md"
  # The per-document table stays in the results; the summaries are printed.
  sed -n '/^documents: /,$p' "$results/outline.md"
  echo
}

step_e2e() {
  echo "## End to end, load, memory"
  echo
  HANDOFF_BENCH_BUILD_DIR="$build" "$root/scripts/bench_e2e.sh"
  echo
}

step_recovery() {
  echo "## Restart after a crash"
  echo
  HANDOFF_BENCH_BUILD_DIR="$build" "$root/scripts/bench_e2e.sh" recovery
  echo
}

step_hook() {
  build_targets handoffd handoff handoff_bench_hook handoff_bench_hook_floor
  echo "## The Claude Code hook against its floors"
  echo
  "$build/bench/handoff_bench_hook" --cli "$build/client/handoff" --floor "$build/bench/handoff_bench_hook_floor" \
    --dir "${HANDOFF_BENCH_DATA_DIR:-$build/bench-data}/hook" --rounds "${HANDOFF_HOOK_ROUNDS:-30}"
  echo
}

step_mcp() {
  build_targets handoff handoff_bench_mcp handoff_bench_mcp_echo
  echo "## handoff mcp against a bare MCP server"
  echo
  "$build/bench/handoff_bench_mcp" --cli "$build/client/handoff" --echo "$build/bench/handoff_bench_mcp_echo" \
    --dir "${HANDOFF_BENCH_DATA_DIR:-$build/bench-data}/mcp" --rounds "${HANDOFF_MCP_ROUNDS:-20}"
  echo
}

step_autostart() {
  build_targets handoffd handoff_bench_autostart
  echo "## A client starting handoffd, against a running one and one started by hand"
  echo
  "$build/bench/handoff_bench_autostart" --dir "${HANDOFF_BENCH_DATA_DIR:-$build/bench-data}" \
    --results "${HANDOFF_AUTOSTART_RESULTS:-10000}" --rounds "${HANDOFF_AUTOSTART_ROUNDS:-10}"
  echo
}

step_soak() {
  build_targets handoffd handoff_bench_soak
  local parents="${HANDOFF_SOAK_PARENTS:-100000}" data="${HANDOFF_BENCH_DATA_DIR:-$build/bench-data}"
  mkdir -p "$data"
  echo "## Soak: $parents parent sessions in turn"
  echo
  echo "\`HANDOFF_SOAK_PARENTS=$parents scripts/bench.sh soak\`, $(date -u +%Y-%m-%d)."
  echo
  "$build/bench/handoff_bench_soak" --dir "$data" --parents "$parents" \
    --sample-every $(( parents >= 10 ? parents / 10 : 1 ))
  echo
}

steps=("$@")
((${#steps[@]})) || steps=(projection e2e recovery)
for s in "${steps[@]}"; do
  declare -F "step_$s" >/dev/null || { echo "bench.sh: unknown step '$s'" >&2; exit 2; }
done
configure
for s in "${steps[@]}"; do "step_$s"; done
