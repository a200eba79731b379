#include "result_mix.hpp"

#include <stdexcept>

#include <CLI/CLI.hpp>

#include "e2e_support.hpp"

namespace handoff::bench {

std::size_t result_mix::size(std::size_t i) const {
  if (max_bytes < min_bytes) throw std::invalid_argument("result mix: max_bytes < min_bytes");
  return min_bytes + mix(i) % (max_bytes - min_bytes + 1);
}

std::string result_mix::text(std::size_t i) const { return report_text(size(i), i); }

std::string result_mix::parent(std::size_t i) const { return "parent-" + std::to_string(i % parents); }

std::string result_mix::child(std::size_t i) const { return child_prefix + "child-" + std::to_string(i); }

std::string result_mix::describe() const { return format_bytes(min_bytes) + " to " + format_bytes(max_bytes); }

void add_mix_options(CLI::App& app, result_mix& mix) {
  app.add_option("--parents", mix.parents, "Parents the results are spread over")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--min-bytes", mix.min_bytes, "Smallest result, bytes")->capture_default_str();
  app.add_option("--max-bytes", mix.max_bytes, "Largest result, bytes")->capture_default_str();
  app.callback([&mix] {
    if (mix.max_bytes < mix.min_bytes) throw CLI::ValidationError("--max-bytes", "is below --min-bytes");
  });
}

}  // namespace handoff::bench
