#!/usr/bin/env bash
# End-to-end, load, memory and recovery benchmarks against a real handoffd built in Release:
#
#   e2e       latency through the socket next to its floors (bench/e2e_latency.cpp)
#   load      completions per second under 8 concurrent clients against the floor of one fsync'd
#             file write per result, measured in the same run on the same file system
#             (bench/load_bench.cpp)
#   memory    the daemon's RSS with 1,000 pending 1 MiB results (bench/memory_bench.cpp)
#   recovery  restart after SIGKILL with 10,000 held results of 4-64 KiB: time until the socket
#             answers and until the queue is fully recovered, against reading the queue's files
#             (bench/recovery_bench.cpp; not in the default list, scripts/bench.sh runs it as
#             its own step)
#
# Each prints markdown tables (medians, ratios).
#
#   scripts/bench_e2e.sh [e2e] [load] [memory] [recovery] [-- extra args for each program]
#
# Builds in ${HANDOFF_BENCH_BUILD_DIR:-build-bench} (shared with scripts/bench.sh). The daemon's
# store and queue go under ${HANDOFF_BENCH_DATA_DIR:-<build>/bench-data}: keep it on a real disk,
# not a tmpfs, since fsync is part of what is measured (each table says which file system).
# HANDOFF_BENCH_QUICK=1 runs fewer rounds (a smoke test; the figures are then rough).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${HANDOFF_BENCH_BUILD_DIR:-$root/build-bench}"
data="${HANDOFF_BENCH_DATA_DIR:-$build/bench-data}"

which=()
while (($#)) && [[ $1 != -- ]]; do which+=("$1"); shift; done
[[ ${1:-} == -- ]] && shift
((${#which[@]})) || which=(e2e load memory)

"$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHANDOFF_BUILD_BENCH=ON >/dev/null
targets=()
for w in "${which[@]}"; do targets+=("handoff_bench_$w"); done
cmake --build "$build" --parallel ${HANDOFF_BENCH_JOBS:-} --target handoffd "${targets[@]}" >/dev/null
mkdir -p "$data"

quick=()
for w in "${which[@]}"; do
  if [[ ${HANDOFF_BENCH_QUICK:-0} == 1 ]]; then
    case $w in
      e2e) quick=(--small-rounds 300 --rounds 30 --large-rounds 10) ;;
      load) quick=(--completions 400) ;;
      memory) quick=(--results 100) ;;
      recovery) quick=(--results 1000 --repetitions 3) ;;
    esac
  fi
  "$build/bench/handoff_bench_$w" --dir "$data" "${quick[@]}" "$@"
  quick=()
done
