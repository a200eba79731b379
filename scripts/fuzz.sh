#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (clang, ASan + UBSan) and runs each for a while.
#
#   scripts/fuzz.sh [seconds-per-fuzzer]        default 60
#
# Each fuzzer starts from its committed seeds (fuzz/corpus/<fuzzer>/), copied to a temporary
# working corpus so the seeds never change, with fuzz/<fuzzer>.dict when there is one. Any
# crash, sanitizer report, leak, timeout (10 s per input) or RSS over 2 GiB fails the run; the
# input that caused it is saved as ${HANDOFF_FUZZ_CRASH_DIR:-build-fuzz/crashes}/<fuzzer>-crash-<sha1>
# and the fuzzer's log as build-fuzz/fuzz-logs/<fuzzer>.log. One summary line per fuzzer.
#
# Environment: HANDOFF_FUZZ_BUILD_DIR (build-fuzz), HANDOFF_FUZZ_CRASH_DIR,
# HANDOFF_FUZZERS (a space-separated subset), HANDOFF_FUZZ_JOBS (build parallelism).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-60}"
build="${HANDOFF_FUZZ_BUILD_DIR:-$root/build-fuzz}"
crashes="${HANDOFF_FUZZ_CRASH_DIR:-$build/crashes}"
logs="$build/fuzz-logs"
read -r -a fuzzers <<<"${HANDOFF_FUZZERS:-fuzz_framing fuzz_dispatch fuzz_projection fuzz_artifact_name fuzz_json fuzz_reply}"

"$root/scripts/setup.sh"
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DHANDOFF_FUZZ=ON -DHANDOFF_BUILD_TESTS=OFF -DHANDOFF_BUILD_BENCH=OFF \
  -DHANDOFF_SANITIZE=fuzzer-no-link,address,undefined >/dev/null
cmake --build "$build" --target "${fuzzers[@]}" --parallel "${HANDOFF_FUZZ_JOBS:-$(nproc)}"

work="$(mktemp -d "${TMPDIR:-/tmp}/handoff-fuzz.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$crashes" "$logs"
# UBSan's findings are fatal like ASan's; leaks are checked (LeakSanitizer, after each input).
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"
export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}"

failed=()
for fuzzer in "${fuzzers[@]}"; do
  corpus="$work/$fuzzer"
  mkdir -p "$corpus"
  seeds="$root/fuzz/corpus/$fuzzer"
  [[ -d "$seeds" ]] && cp "$seeds"/. "$corpus"/ -r
  options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
           -artifact_prefix="$crashes/$fuzzer-")
  [[ -f "$root/fuzz/$fuzzer.dict" ]] && options+=(-dict="$root/fuzz/$fuzzer.dict")
  # The daemon's ~20,000 features per input make the entropic schedule's bookkeeping most of
  # the time: without it fuzz_dispatch runs about 5x more inputs.
  [[ $fuzzer == fuzz_dispatch ]] && options+=(-entropic=0)
  log="$logs/$fuzzer.log"
  status=0
  "$build/fuzz/$fuzzer" "${options[@]}" "$corpus" >"$log" 2>&1 || status=$?

  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
  # The last status line: "#123 DONE cov: 456 ft: 789 corp: 12/3456b ...".
  last="$(grep -E '^#[0-9]+' "$log" | tail -1 || true)"
  cov="$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")"
  ft="$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")"
  corp="$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")"
  if ((status == 0)); then
    echo "fuzz: $fuzzer ok: ${runs:-?} runs in ${seconds} s (${rate:-?}/s), coverage ${cov:-?} edges, ${ft:-?} features, corpus ${corp:-?}"
  else
    echo "fuzz: $fuzzer FAILED (exit $status) after ${runs:-?} runs; log: $log" >&2
    grep -E 'ERROR|SUMMARY|invariant broken|check failed|runtime error|Test unit written' "$log" | head -20 >&2 || true
    failed+=("$fuzzer")
  fi
done
if ((${#failed[@]})); then
  echo "fuzz: failed: ${failed[*]} (inputs in $crashes; reproduce with $build/fuzz/<fuzzer> <input>)" >&2
  exit 1
fi
