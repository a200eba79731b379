// Checks shared by projection_test.cpp and projection_property_test.cpp: everything a cut
// projection promises, read back from its TEXT the way a parent model would read it, then
// compared with the struct.
#pragma once

#include <doctest/doctest.h>

#include <cstddef>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "engine/projection.hpp"
#include "engine/text_page.hpp"
#include "utf8.hpp"

namespace handoff::test {

inline constexpr std::string_view marker_prefix = "[... middle omitted: ";
inline constexpr std::string_view footer_prefix = "[Truncated: ";
inline constexpr std::string_view replacement_char = "\xEF\xBF\xBD";  // U+FFFD

// text.split("\n"), as Pi's read numbers lines.
inline std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  for (std::size_t nl = text.find('\n'); nl != std::string_view::npos;
       nl = text.find('\n', start)) {
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  lines.push_back(text.substr(start));
  return lines;
}

inline std::string join_lines(const std::vector<std::string_view>& lines) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out.push_back('\n');
    out.append(lines[i]);
  }
  return out;
}

inline bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The read call a parent would make, taken from the footer's words alone.
struct read_call {
  std::size_t offset = 0;
  std::size_t limit = 0;
};

inline std::optional<read_call> parse_read_call(std::string_view footer) {
  static const std::regex saved(R"(read it with offset=(\d+) limit=(\d+) for the omitted lines)");
  static const std::regex unsaved(R"(the omitted lines? (\d+)(?:-(\d+))? cannot be read back)");
  const std::string text(footer);
  std::smatch m;
  if (std::regex_search(text, m, saved)) {
    return read_call{std::stoul(m[1].str()), std::stoul(m[2].str())};
  }
  if (std::regex_search(text, m, unsaved)) {
    const std::size_t first = std::stoul(m[1].str());
    const std::size_t last = m[2].matched ? std::stoul(m[2].str()) : first;
    return read_call{first, last - first + 1};
  }
  return std::nullopt;
}

// The projection's text taken apart: lines before the marker, the marker, the lines between
// the marker and the two-line footer, and the footer.
struct projection_parts {
  std::vector<std::string_view> head;
  std::string_view marker;
  std::vector<std::string_view> tail;
  std::string footer;
};

inline projection_parts split_projection(std::string_view out) {
  const std::vector<std::string_view> lines = split_lines(out);
  projection_parts parts;
  REQUIRE(lines.size() >= 3);
  std::size_t marker = lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].substr(0, marker_prefix.size()) == marker_prefix) {
      REQUIRE_MESSAGE(marker == lines.size(), "more than one marker line");
      marker = i;
    }
  }
  REQUIRE(marker + 2 < lines.size());
  parts.head.assign(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(marker));
  parts.marker = lines[marker];
  parts.tail.assign(lines.begin() + static_cast<std::ptrdiff_t>(marker) + 1, lines.end() - 2);
  REQUIRE(lines[lines.size() - 2].substr(0, footer_prefix.size()) == footer_prefix);
  parts.footer = std::string(lines[lines.size() - 2]) + "\n" + std::string(lines.back());
  return parts;
}

// Every promise of a cut projection `p` of `text`. The read call is parsed from the footer
// text, the head and tail from the projection text; the struct must agree with both.
inline read_call check_cut(std::string_view text, const projection_limits& limits,
                           const artifact_ref& artifact, const projection& p) {
  REQUIRE(p.truncated);
  const std::string& out = p.text;
  CHECK(out.size() <= limits.max_bytes);
  CHECK(split_lines(out).size() <= limits.max_lines);
  if (valid_utf8(text)) CHECK(valid_utf8(out));
  if (text.find(replacement_char) == std::string_view::npos) {
    CHECK(out.find(replacement_char) == std::string::npos);
  }

  const projection_parts parts = split_projection(out);
  const std::optional<read_call> call = parse_read_call(parts.footer);
  REQUIRE(call.has_value());
  const std::vector<std::string_view> lines = split_lines(text);
  const std::size_t total = lines.size();
  REQUIRE(call->offset >= 1);
  REQUIRE(call->limit >= 1);
  REQUIRE(call->offset + call->limit - 1 <= total);

  // Lines before the omitted range are the head's whole lines; a partly shown line counts as
  // omitted, so it can only be the one right after them (and likewise for the tail).
  const std::size_t head_whole = call->offset - 1;
  const std::size_t last_omitted = call->offset + call->limit - 1;
  const std::size_t tail_whole = total - last_omitted;
  REQUIRE(parts.head.size() >= head_whole);
  REQUIRE(parts.head.size() <= head_whole + 1);
  REQUIRE(parts.tail.size() >= tail_whole);
  REQUIRE(parts.tail.size() <= tail_whole + 1);
  const bool head_partial = parts.head.size() > head_whole;
  const bool tail_partial = parts.tail.size() > tail_whole;

  for (std::size_t i = 0; i < head_whole; ++i) REQUIRE(parts.head[i] == lines[i]);
  for (std::size_t i = 0; i < tail_whole; ++i) {
    REQUIRE(parts.tail[parts.tail.size() - tail_whole + i] == lines[last_omitted + i]);
  }
  if (head_partial) {
    const std::string_view part = parts.head.back();
    const std::string_view line = lines[head_whole];
    CHECK(!part.empty());
    CHECK(part.size() < line.size());
    CHECK(line.substr(0, part.size()) == part);
    CHECK(parts.footer.find("start of line " + std::to_string(head_whole + 1)) !=
          std::string::npos);
  }
  if (tail_partial) {
    const std::string_view part = parts.tail.front();
    const std::string_view line = lines[last_omitted - 1];
    CHECK(!part.empty());
    CHECK(part.size() < line.size());
    CHECK(ends_with(line, part));
    CHECK(parts.footer.find("end of line " + std::to_string(last_omitted)) != std::string::npos);
  }

  // Head, the lines Pi's read returns for the footer's call, and tail rebuild the text.
  std::vector<std::string_view> rebuilt(
      parts.head.begin(), parts.head.begin() + static_cast<std::ptrdiff_t>(head_whole));
  for (std::size_t i = 0; i < call->limit; ++i) rebuilt.push_back(lines[call->offset - 1 + i]);
  rebuilt.insert(rebuilt.end(), parts.tail.end() - static_cast<std::ptrdiff_t>(tail_whole),
                 parts.tail.end());
  CHECK(join_lines(rebuilt) == text);

  // The shown text is a prefix and a suffix of the full text.
  const std::string head_text = join_lines(parts.head);
  const std::string tail_text = join_lines(parts.tail);
  CHECK(text.substr(0, head_text.size()) == head_text);
  CHECK(ends_with(text, tail_text));

  // The struct says the same as the text.
  CHECK(p.total.bytes == text.size());
  CHECK(p.total.lines == total);
  CHECK(p.head_lines == head_whole);
  CHECK(p.tail_lines == tail_whole);
  CHECK(p.head_partial == head_partial);
  CHECK(p.tail_partial == tail_partial);
  CHECK(p.omitted_first == call->offset);
  CHECK(p.omitted_count == call->limit);
  CHECK(p.head_bytes == (parts.head.empty() ? 0 : head_text.size() + (head_partial ? 0 : 1)));
  CHECK(p.tail_bytes == tail_text.size());
  CHECK(text.substr(0, p.head_bytes) == out.substr(0, p.head_bytes));

  // What the footer may say about the artifact.
  if (artifact.saved) {
    CHECK(parts.footer.find("Full text: " + artifact.path + " ") != std::string::npos);
  } else {
    CHECK(parts.footer.find("NOT saved") != std::string::npos);
    if (!artifact.path.empty()) CHECK(out.find(artifact.path) == std::string::npos);
  }
  const std::string range = call->limit == 1 ? "line " + std::to_string(call->offset)
                                             : "lines " + std::to_string(call->offset) + "-" +
                                                   std::to_string(last_omitted);
  CHECK(parts.marker.find(range + " of " + std::to_string(total) + ",") != std::string_view::npos);
  return *call;
}

}  // namespace handoff::test
