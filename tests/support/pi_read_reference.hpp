// Pi 1.6.0's read and bash tools, transcribed from dist/core/tools/read.js, truncate.js, bash.js
// and output-accumulator.js, as the reference that read_page() and the projection's footer are
// checked against: by tests/engine/text_page_test.cpp, tests/engine/projection_property_test.cpp (through
// projection_checks.hpp), fuzz/fuzz_artifact_name.cpp and fuzz/fuzz_projection.cpp.
// Header-only and free of any test framework, so a fuzzer can use it too.
//
// Pi 1.6.0's read streams the file and keeps only the selected lines up to one past its caps,
// then runs truncateHead on them; that gives what truncateHead of the whole selection gives, so
// the transcription below takes the whole selection. client/pi/test/pi22/footer-read.test.ts
// checks the same footers against Pi's own code.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/text/text_page.hpp"

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

// truncate.js formatSize.
inline std::string pi_format_size(std::size_t bytes) {
  char buffer[32];
  if (bytes < 1024) {
    std::snprintf(buffer, sizeof buffer, "%zuB", bytes);
  } else if (bytes < 1024 * 1024) {
    std::snprintf(buffer, sizeof buffer, "%.1fKB", static_cast<double>(bytes) / 1024.0);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.1fMB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  }
  return buffer;
}

// The text of the read tool's result as the model gets it (read.js execute()): the lines, then
// Pi's notice when it cut the page ("[Showing lines ...]"), refused a line over 50 KiB ("[Line N
// is ..., exceeds 50.0KB limit ...]") or stopped at `limit` before the end ("[N more lines in
// file. Use offset=M to continue.]"). An offset past the end is Pi's error, in `error`.
struct pi_tool_output {
  std::string text;
  std::string error;         // non-empty: the tool threw this message
  std::string content;       // the lines shown, without any notice
  bool cut = false;          // Pi printed "[Showing lines ...]": the page was cut
  bool refused = false;      // Pi printed "[Line N is ...]": nothing of the line shown
};

inline pi_tool_output pi_read_tool(const std::vector<std::string_view>& all, std::size_t offset,
                                   std::optional<std::size_t> limit, std::string_view path) {
  pi_tool_output out;
  const std::size_t start = offset > 0 ? offset - 1 : 0;  // `offset ? offset - 1 : 0`
  const std::size_t total = all.size();
  if (start >= total) {
    out.error = "Offset " + std::to_string(offset) + " is beyond end of file (" + std::to_string(total) +
                " lines total)";
    return out;
  }
  const pi_result page = pi_read(all, start + 1, limit);
  const std::size_t display = start + 1;
  if (page.first_line_exceeds) {
    out.refused = true;
    out.text = "[Line " + std::to_string(display) + " is " + pi_format_size(all[start].size()) + ", exceeds " +
               pi_format_size(read_max_bytes) + " limit. Use bash: sed -n '" + std::to_string(display) + "p' " +
               std::string(path) + " | head -c " + std::to_string(read_max_bytes) + "]";
    return out;
  }
  out.content = page.content;
  out.text = page.content;
  const std::size_t selected_end = limit ? std::min(start + *limit, total) : total;
  if (page.last_line < selected_end) {
    out.cut = true;
    const bool by_lines = page.last_line - start >= read_max_lines;
    out.text += "\n\n[Showing lines " + std::to_string(display) + "-" + std::to_string(page.last_line) + " of " +
                std::to_string(total) + (by_lines ? "" : " (" + pi_format_size(read_max_bytes) + " limit)") +
                ". Use offset=" + std::to_string(page.last_line + 1) + " to continue.]";
  } else if (limit && selected_end < total) {
    out.text += "\n\n[" + std::to_string(total - selected_end) + " more lines in file. Use offset=" +
                std::to_string(selected_end + 1) + " to continue.]";
  }
  return out;
}

// What Pi's bash tool shows of a command's output (bash.js + output-accumulator.js): the output
// whole when it has at most 2000 lines (newlines, plus one for an unterminated last line) and
// at most 50 KiB; else a tail and a "[Showing ...]" notice. Returns whether it is shown whole.
inline bool pi_bash_shows_whole(std::string_view output) {
  const std::size_t newlines = static_cast<std::size_t>(std::count(output.begin(), output.end(), '\n'));
  const bool open_line = !output.empty() && output.back() != '\n';
  return newlines + (open_line ? 1 : 0) <= read_max_lines && output.size() <= read_max_bytes;
}

}  // namespace handoff::test
