// One benchmark case set up the way the daemon meets it: a single finished child delivered by
// `subagent/wait` under the static wait caps (16 KiB / 600 lines per result, no usage), its
// hash already known from `subagent/completed` (the queue hashes every text on arrival).
//
// It also derives the budgets Pi's truncateHead / truncateTail get for the same case: the
// head's and the tail's shares of the room the projection leaves beside its notices, as
// OpenPI's in-process projection splits it (or the whole limits, for a text that fits).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/text/batch.hpp"
#include "projection_inputs.hpp"

namespace handoff::bench {

// The `maxBytes` / `maxLines` options of one Pi truncate call.
struct pi_limits {
  std::size_t max_bytes = 0;
  std::size_t max_lines = 0;
};

struct prepared_case {
  const input_case* input = nullptr;
  batch_input child;              // what the daemon hands build_batch for this result
  batch_options options;          // subagent/wait caps, no usage
  projection_limits limits;       // the limits build_batch gives this result's projection
  artifact_ref artifact;          // a saved artifact under Pi's default artifact directory
  pi_limits pi_head;              // truncateHead budget
  pi_limits pi_tail;              // truncateTail budget
  projection expected;            // handoff's projection, for the manifest's sanity figures
};

prepared_case prepare(const input_case& input);

// Writes every case's text to `dir`/<file> and `dir`/cases.json, the manifest
// bench/pi_truncate.mjs reads: name, file, bytes, the Pi budgets and handoff's cut.
void dump_inputs(const std::vector<prepared_case>& cases, const std::filesystem::path& dir);

}  // namespace handoff::bench
