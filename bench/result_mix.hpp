// The results the load and recovery benchmarks complete, so both measure the same mix: result
// i is report_text(size(i), i), its size drawn from [min_bytes, max_bytes] by mix(i), its
// parent "parent-<i mod parents>" and its child "<prefix>child-<i>".
#pragma once

#include <cstddef>
#include <string>

namespace CLI {
class App;
}

namespace handoff::bench {

struct result_mix {
  std::size_t parents = 50;             // parents the results are spread over, round robin
  std::size_t min_bytes = 4 * 1024;     // smallest final text, bytes
  std::size_t max_bytes = 64 * 1024;    // largest final text, bytes (>= min_bytes)
  std::string child_prefix;             // tells apart the children of repeated rounds

  std::size_t size(std::size_t i) const;
  std::string text(std::size_t i) const;  // exactly size(i) bytes
  std::string parent(std::size_t i) const;
  std::string child(std::size_t i) const;
  // "4 KiB to 64 KiB".
  std::string describe() const;
};

// --parents, --min-bytes and --max-bytes for `mix`, with the defaults above; a maximum below
// the minimum is refused when the command line is parsed.
void add_mix_options(CLI::App& app, result_mix& mix);

}  // namespace handoff::bench
