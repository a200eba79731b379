// Pi's read tool, transcribed line by line (read.js + truncateHead) as the reference that
// read_page() is checked against: by tests/text_page_test.cpp and fuzz/fuzz_artifact_name.cpp.
// Header-only and free of any test framework, so a fuzzer can use it too.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/text_page.hpp"

namespace handoff::test {

// text.split("\n"): a final newline makes one more, empty, line.
inline std::vector<std::string_view> split(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  for (std::size_t nl = text.find('\n'); nl != std::string_view::npos; nl = text.find('\n', start)) {
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  lines.push_back(text.substr(start));
  return lines;
}

// lines[from, to) joined with "\n".
inline std::string join(const std::vector<std::string_view>& lines, std::size_t from, std::size_t to) {
  std::string out;
  for (std::size_t i = from; i < to; ++i) {
    if (i > from) out.push_back('\n');
    out += lines[i];
  }
  return out;
}

// What the model sees as content (before Pi's own "[Showing lines ...]" hint) and the last
// line shown.
struct pi_result {
  std::string content;
  std::size_t last_line = 0;
  bool first_line_exceeds = false;
};

// Pi's read of `all` (the text's lines) at 1-based `offset`, `limit` lines.
inline pi_result pi_read(const std::vector<std::string_view>& all, std::size_t offset,
                         std::optional<std::size_t> limit) {
  const std::size_t start = offset - 1;
  const std::size_t end = limit ? std::min(start + *limit, all.size()) : all.size();
  const std::string selected = join(all, start, end);
  // splitLinesForCounting: "" has no lines; a trailing "\n" does not start one.
  std::vector<std::string_view> counted = selected.empty() ? std::vector<std::string_view>{} : split(selected);
  if (!selected.empty() && selected.back() == '\n') counted.pop_back();
  if (counted.size() <= read_max_lines && selected.size() <= read_max_bytes) return {selected, end, false};
  if (counted.front().size() > read_max_bytes) return {"", start, true};
  std::size_t bytes = 0;
  std::size_t kept = 0;
  for (; kept < counted.size() && kept < read_max_lines; ++kept) {
    const std::size_t cost = counted[kept].size() + (kept > 0 ? 1 : 0);
    if (bytes + cost > read_max_bytes) break;
    bytes += cost;
  }
  return {join(counted, 0, kept), start + kept, false};
}

inline pi_result pi_read(std::string_view text, std::size_t offset, std::optional<std::size_t> limit) {
  return pi_read(split(text), offset, limit);
}

}  // namespace handoff::test
