#!/usr/bin/env python3
"""Merges the projection benchmark's JSON (Google Benchmark, --benchmark_out) and the Node
peer's JSON (bench/pi_truncate.mjs) into one markdown table of medians and ratios.

    projection_table.py GBENCH_JSON PI_JSON

Both sides time wall clock and report medians, so ratios taken from the same run are
meaningful even on a loaded machine; absolute times are not comparable between runs.
"""
import json
import sys

# Targets from issue 6.
PI_TARGET_AT_1MIB = 10.0  # handoff at least this many times faster than Pi's pair at 1 MiB
MEMCHR_TARGET = 3.0  # handoff within this factor of one memchr pass

UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def gbench_medians(path):
    """{(kind, case): median real time in ns} from a run with repetitions and aggregates."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    medians = {}
    # With one repetition Google Benchmark writes no aggregates: that single run is the median.
    wanted = "median" if any(b.get("aggregate_name") == "median" for b in data["benchmarks"]) else None
    for b in data["benchmarks"]:
        if b.get("aggregate_name") != wanted:
            continue
        # run_name is "<kind>/<script>/<size>/real_time".
        parts = b["run_name"].split("/")
        kind, case = parts[0], "/".join(parts[1:3])
        medians[(kind, case)] = b["real_time"] * UNIT_NS[b["time_unit"]]
    return medians, data.get("context", {})


def fmt_time(ns):
    if ns is None:
        return "-"
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns / 1e6:.2f} ms"


def fmt_ratio(x):
    return "-" if x is None else f"{x:.1f}x" if x < 100 else f"{x:.0f}x"


def ratio(a, b):
    return a / b if a is not None and b else None


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    medians, context = gbench_medians(sys.argv[1])
    with open(sys.argv[2], encoding="utf-8") as f:
        pi = json.load(f)
    pi_by_case = {c["name"]: c for c in pi["cases"]}
    cases = [c["name"] for c in pi["cases"]]  # the manifest's order: script, then size

    print("| size | script | handoff projection | + SHA-256 | daemon build_batch | memchr pass "
          "| SHA-256 pass | Pi truncateHead+Tail | Pi / handoff | handoff / memchr "
          "| (handoff + SHA) / SHA |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    worst_memchr, pi_at_1mib = None, []
    for case in cases:
        script, size = case.split("/")
        get = lambda kind: medians.get((kind, case))  # noqa: E731
        handoff, memchr = get("projection"), get("memchr")
        pi_ns = pi_by_case[case]["median_ns"]
        pi_ratio, memchr_ratio = ratio(pi_ns, handoff), ratio(handoff, memchr)
        if memchr_ratio is not None:
            worst_memchr = max(worst_memchr or 0.0, memchr_ratio)
        if size == "1MiB" and pi_ratio is not None:
            pi_at_1mib.append((script, pi_ratio))
        print(f"| {size} | {script} | {fmt_time(handoff)} | {fmt_time(get('projection_sha256'))} "
              f"| {fmt_time(get('batch'))} | {fmt_time(memchr)} | {fmt_time(get('sha256'))} "
              f"| {fmt_time(pi_ns)} | {fmt_ratio(pi_ratio)} | {fmt_ratio(memchr_ratio)} "
              f"| {fmt_ratio(ratio(get('projection_sha256'), get('sha256')))} |")

    print()
    met = all(r >= PI_TARGET_AT_1MIB for _, r in pi_at_1mib) and pi_at_1mib
    shown = ", ".join(f"{s} {fmt_ratio(r)}" for s, r in pi_at_1mib)
    print(f"- Pi / handoff at 1 MiB: {shown} (target >= {PI_TARGET_AT_1MIB:.0f}x): "
          f"{'met' if met else 'NOT met'}")
    memchr_met = worst_memchr is not None and worst_memchr <= MEMCHR_TARGET
    print(f"- handoff / memchr, worst case: {fmt_ratio(worst_memchr)} "
          f"(target <= {MEMCHR_TARGET:.0f}x): {'met' if memchr_met else 'NOT met'}")
    print(f"- Medians of wall time on {context.get('num_cpus', '?')} CPUs at "
          f"{context.get('mhz_per_cpu', '?')} MHz (load average "
          f"{', '.join(f'{x:.1f}' for x in context.get('load_avg', [])) or '?'}); handoff: Release "
          f"build, Google Benchmark; Pi {pi['pi']['version']} ({pi['pi']['module']}) on Node "
          f"{pi['pi']['node']}.")


if __name__ == "__main__":
    main()
