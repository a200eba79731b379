// The peer of bench/projection_bench.cpp: Pi's own truncateHead + truncateTail, run in-process
// by Node on the same bytes with the same budgets, as OpenPI's projection calls them.
//
//   node bench/pi_truncate.mjs INPUT_DIR [--min-ms N] [--samples N] > pi.json
//
// INPUT_DIR is what `handoff_bench_projection --dump-inputs INPUT_DIR` wrote: the texts and
// cases.json with each case's head and tail budgets. For every case it times one
// truncateHead + truncateTail pair, the way Google Benchmark times the C++ side: calls are
// batched until a batch takes --min-ms, and the median of --samples batches is reported as
// ns per pair. Output: JSON {pi: {version, module}, cases: [{name, bytes, median_ns, ...}]}.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const piRoot = join(here, "..", "client", "pi", "node_modules", "@earendil-works", "pi-coding-agent");

// The package's entry point re-exports truncateHead/truncateTail from dist/core/tools/truncate.js
// but also loads the whole agent, which needs Node >= 22.19 (node:fs globSync). The module itself
// has no imports, so when the entry point cannot load here, the same functions come from it.
async function loadPi() {
  try {
    const m = await import(pathToFileURL(join(piRoot, "dist", "index.js")).href);
    if (typeof m.truncateHead === "function") return { ...pick(m), module: "dist/index.js" };
  } catch {
    // fall through to the module that defines them
  }
  const m = await import(pathToFileURL(join(piRoot, "dist", "core", "tools", "truncate.js")).href);
  return { ...pick(m), module: "dist/core/tools/truncate.js" };
}

function pick(m) {
  if (typeof m.truncateHead !== "function" || typeof m.truncateTail !== "function")
    throw new Error(`Pi at ${piRoot} exports no truncateHead/truncateTail`);
  return { truncateHead: m.truncateHead, truncateTail: m.truncateTail };
}

function option(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

// Keeps results observable so V8 cannot drop the calls.
let sink = 0;

function timeCase(pi, text, c, minNs, samples) {
  const pair = () => {
    const head = pi.truncateHead(text, c.head);
    const tail = pi.truncateTail(text, c.tail);
    sink += head.outputLines + tail.outputLines;
    return [head, tail];
  };
  const [head, tail] = pair();  // also the first warm-up call
  // Warm up for about one batch's time, then size the batch to take at least minNs.
  let calls = 1;
  for (;;) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) pair();
    const ns = Number(process.hrtime.bigint() - start);
    if (ns >= minNs) break;
    calls = Math.max(calls * 2, Math.ceil((calls * minNs) / Math.max(ns, 1)));
  }
  const perCall = [];
  for (let s = 0; s < samples; s++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) pair();
    perCall.push(Number(process.hrtime.bigint() - start) / calls);
  }
  return {
    name: c.name,
    bytes: c.bytes,
    median_ns: median(perCall),
    min_ns: Math.min(...perCall),
    samples,
    calls_per_sample: calls,
    head_lines: head.outputLines,
    tail_lines: tail.outputLines,
    truncated: head.truncated || tail.truncated,
  };
}

async function main() {
  const dir = process.argv[2];
  if (!dir || dir.startsWith("--")) {
    console.error("usage: node bench/pi_truncate.mjs INPUT_DIR [--min-ms N] [--samples N]");
    process.exit(2);
  }
  const minNs = option("--min-ms", 20) * 1e6;
  const samples = option("--samples", 15);
  const pi = await loadPi();
  const version = JSON.parse(readFileSync(join(piRoot, "package.json"), "utf8")).version;
  const manifest = JSON.parse(readFileSync(join(resolve(dir), "cases.json"), "utf8"));
  const cases = [];
  for (const c of manifest) {
    // Pi gets a JS string, as it does from a subagent's final message.
    const bytes = readFileSync(join(resolve(dir), c.file));
    // The very bytes handoff's side measured: same hash as the benchmark computed.
    if (createHash("sha256").update(bytes).digest("hex") !== c.sha256)
      throw new Error(`${c.file} is not the input the benchmark dumped (SHA-256 differs)`);
    const text = bytes.toString("utf8");
    cases.push(timeCase(pi, text, c, minNs, samples));
    console.error(`pi ${c.name}: ${(cases.at(-1).median_ns / 1e3).toFixed(1)} us`);
  }
  process.stdout.write(JSON.stringify({ pi: { version, module: pi.module, node: process.version }, sink, cases }, null, 2) + "\n");
}

await main();
