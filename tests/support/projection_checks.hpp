// Checks shared by projection_test.cpp and projection_property_test.cpp: everything a cut
// projection promises, read back from its TEXT the way a parent model would read it, then
// compared with the struct.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "engine/text/outline.hpp"
#include "engine/text/projection.hpp"
#include "engine/text/projection_notice.hpp"
#include "engine/text/text_page.hpp"
#include "pi_read_reference.hpp"
#include "utf8.hpp"

namespace handoff::test {

inline constexpr std::string_view marker_prefix = "[... middle omitted: ";
inline constexpr std::string_view footer_prefix = "[Truncated: ";
inline constexpr std::string_view outline_prefix = "[Omitted sections, at their lines of the full text (";
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

// A call the footer names, parsed from its words alone.
struct footer_call {
  bool bytes = false;           // bash `'reader' read --bytes first_byte-end_byte 'path'`
  std::size_t offset = 0;       // read offset=offset limit=limit
  std::size_t limit = 0;
  std::size_t first_byte = 0;
  std::size_t end_byte = 0;
  std::string path;             // bytes: the file the command reads
  std::string reader;           // bytes: the `handoff` CLI it runs (artifact_ref::reader)
};

// What the footer says about the omitted lines: their range, and either the calls that read
// them back, or the plan command that prints those calls, or that they cannot be read back.
struct footer_reads {
  std::size_t first = 0;  // omitted lines first..last, 1-based
  std::size_t last = 0;
  bool saved = false;
  std::vector<footer_call> calls;  // listed calls (saved, no plan)
  bool plan = false;               // saved: bash `'plan_reader' read --plan first-last 'plan_path'`
  std::string plan_path;
  std::string plan_reader;
};

// A shell word in single quotes, as append_shell_word() writes it, back to the string.
inline std::string unquote_shell_word(const std::string& quoted) {
  std::string out;
  for (std::size_t i = 0; i < quoted.size(); ++i) {
    if (quoted.compare(i, 4, "'\\''") == 0) {
      out.push_back('\'');
      i += 3;
    } else {
      out.push_back(quoted[i]);
    }
  }
  return out;
}

// The calls in "read offset=N limit=M; bash `'CLI' read --bytes A-B 'PATH'`; ..." (also the
// lines `handoff read --plan` prints, one call each).
inline std::vector<footer_call> parse_calls(const std::string& list) {
  static const std::regex call(
      R"(read offset=(\d+) limit=(\d+)|bash `'((?:[^']|'\\'')*)' read --bytes (\d+)-(\d+) '((?:[^']|'\\'')*)'`)");
  std::vector<footer_call> calls;
  for (auto it = std::sregex_iterator(list.begin(), list.end(), call); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    footer_call c;
    if (m[1].matched) {
      c.offset = std::stoul(m[1].str());
      c.limit = std::stoul(m[2].str());
    } else {
      c.bytes = true;
      c.reader = unquote_shell_word(m[3].str());
      c.first_byte = std::stoul(m[4].str());
      c.end_byte = std::stoul(m[5].str());
      c.path = unquote_shell_word(m[6].str());
    }
    calls.push_back(std::move(c));
  }
  return calls;
}

inline std::optional<footer_reads> parse_footer(std::string_view footer) {
  static const std::regex listed(R"(omitted lines? (\d+)(?:-(\d+))? in (\d+) calls?, each shown whole: (.*)\.\]$)");
  static const std::regex planned(
      R"(Full text saved; bash `'((?:[^']|'\\'')*)' read --plan (\d+)-(\d+) '((?:[^']|'\\'')*)'` lists the calls that read the omitted lines? (\d+)(?:-(\d+))? back, each shown whole\.\]$)");
  static const std::regex unsaved(R"(the omitted lines? (\d+)(?:-(\d+))? cannot be read back)");
  const std::string text(footer);
  std::smatch m;
  footer_reads r;
  const auto range = [&] {
    r.first = std::stoul(m[1].str());
    r.last = m[2].matched ? std::stoul(m[2].str()) : r.first;
  };
  if (std::regex_search(text, m, listed)) {
    range();
    r.saved = true;
    r.calls = parse_calls(m[4].str());
    CHECK(r.calls.size() == std::stoul(m[3].str()));
    return r;
  }
  if (std::regex_search(text, m, planned)) {
    r.first = std::stoul(m[5].str());
    r.last = m[6].matched ? std::stoul(m[6].str()) : r.first;
    r.saved = true;
    r.plan = true;
    r.plan_reader = unquote_shell_word(m[1].str());
    CHECK(std::stoul(m[2].str()) == r.first);
    CHECK(std::stoul(m[3].str()) == r.last);
    r.plan_path = unquote_shell_word(m[4].str());
    return r;
  }
  if (std::regex_search(text, m, unsaved)) {
    range();
    return r;
  }
  return std::nullopt;
}

// What `handoff read --plan first-last PATH` prints for `text`: the same read_plan, one call a
// line, as the CLI formats it (the Node test runs the CLI itself).
inline std::string plan_listing(std::string_view text, std::size_t first, std::size_t last, std::string_view path,
                                std::string_view reader) {
  std::string out;
  read_plan plan(text, first, last);
  while (const std::optional<read_step> step = plan.next()) {
    append_read_call(out, *step, path, reader);
    out.push_back('\n');
  }
  return out;
}

// Follows `calls` as a parent would, in Pi 1.6.0's tools as pi_read_reference.hpp transcribes
// them, on the artifact `text` at `path`, and returns what they gave, joined the way the lines
// are: each call must return exactly its lines or bytes, with no cut, no refusal and no error.
inline std::string follow_calls(std::string_view text, std::string_view path, const std::vector<footer_call>& calls) {
  const std::vector<std::string_view> lines = split(text);
  const bool utf8 = valid_utf8(text);
  std::string out;
  const footer_call* previous = nullptr;
  for (const footer_call& c : calls) {
    // A byte range continues the line the previous one ended in; anything else starts a line.
    const bool continues = previous != nullptr && previous->bytes && c.bytes && c.first_byte == previous->end_byte;
    if (previous != nullptr && !continues) out.push_back('\n');
    if (!c.bytes) {
      CAPTURE(c.offset);
      CAPTURE(c.limit);
      REQUIRE(c.limit >= 1);
      const pi_tool_output r = pi_read_tool(lines, c.offset, c.limit, path);
      REQUIRE(r.error.empty());
      CHECK_FALSE(r.refused);
      CHECK_FALSE(r.cut);
      REQUIRE(c.offset + c.limit - 1 <= lines.size());
      const std::string_view after = std::string_view(r.text).substr(r.content.size());
      CHECK((after.empty() || after.find(" more lines in file. Use offset=") != std::string_view::npos));
      out += r.content;
    } else {
      CAPTURE(c.first_byte);
      CAPTURE(c.end_byte);
      CHECK(c.path == path);
      REQUIRE(c.first_byte < c.end_byte);
      REQUIRE(c.end_byte <= text.size());
      // `handoff read --bytes A-B` moves each end back to a character boundary: the footer's
      // ends are on boundaries already. (In bytes that are not UTF-8 a "boundary" means little,
      // and Pi would show U+FFFD anyway: exactness is promised for UTF-8 text only.)
      if (utf8) {
        CHECK(utf8_floor(text, c.first_byte) == c.first_byte);
        CHECK(utf8_floor(text, c.end_byte) == c.end_byte);
      }
      const std::string_view shown = text.substr(c.first_byte, c.end_byte - c.first_byte);
      CHECK(pi_bash_shows_whole(shown));
      CHECK(shown.find('\n') == std::string_view::npos);
      out += shown;
    }
    previous = &c;
  }
  return out;
}

// The projection's text taken apart: lines before the marker, the marker, the outline block
// after it (none when the text has none: its first line starts with outline_prefix, its last
// ends in ']'), the lines between it and the two-line footer, and the footer. When the full
// text ends in '\n', its empty last line is shown by that '\n' (the footer starts on it), and
// `tail` ends with it.
struct projection_parts {
  std::vector<std::string_view> head;
  std::string_view marker;
  std::vector<std::string_view> outline;
  std::vector<std::string_view> tail;
  std::string footer;
};

inline projection_parts split_projection(std::string_view out, bool final_newline) {
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
  std::size_t tail = marker + 1;
  if (lines[tail].substr(0, outline_prefix.size()) == outline_prefix) {
    while (tail + 2 < lines.size() && (lines[tail].empty() || lines[tail].back() != ']')) {
      parts.outline.push_back(lines[tail++]);
    }
    REQUIRE_MESSAGE(tail + 2 < lines.size(), "an outline block that never ends");
    parts.outline.push_back(lines[tail++]);
  }
  parts.tail.assign(lines.begin() + static_cast<std::ptrdiff_t>(tail), lines.end() - 2);
  if (final_newline) parts.tail.emplace_back();
  REQUIRE(lines[lines.size() - 2].substr(0, footer_prefix.size()) == footer_prefix);
  parts.footer = std::string(lines[lines.size() - 2]) + "\n" + std::string(lines.back());
  return parts;
}

// A heading's title as an outline entry shows it: control characters as spaces, '[' ']' as
// '(' ')'.
inline std::string outline_shown(std::string_view title) {
  std::string out;
  for (const char c : title) {
    const auto byte = static_cast<unsigned char>(c);
    out.push_back(byte < 0x20U || byte == 0x7FU ? ' ' : c == '[' ? '(' : c == ']' ? ')' : c);
  }
  return out;
}

inline bool blank_line(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

// Line `number` (1-based) of `lines` read as the start of a heading of `level` whose title the
// entry shows as `shown`, without markdown_headings.cpp: an ATX heading ("## Title", indented
// up to 3 spaces), or a line of text under which, before any blank line, a line of only '='
// (level 1) or only '-' (level 2) follows.
inline void check_heading_at(const std::vector<std::string_view>& lines, std::size_t number, std::size_t level,
                             std::string shown) {
  CAPTURE(number);
  CAPTURE(shown);
  REQUIRE(number >= 1);
  REQUIRE(number <= lines.size());
  const std::string_view line = lines[number - 1];
  const std::size_t indent = line.find_first_not_of(' ');
  REQUIRE(indent != std::string_view::npos);
  REQUIRE(indent <= 3);
  std::string_view title;
  if (line.substr(indent, level) == std::string(level, '#') && line.size() > indent + level &&
      (line[indent + level] == ' ' || line[indent + level] == '\t')) {
    title = line.substr(indent + level);
  } else {
    REQUIRE(level <= 2);
    const char underline = level == 1 ? '=' : '-';
    bool found = false;
    for (std::size_t i = number; i < lines.size() && !found && !blank_line(lines[i]); ++i) {
      const std::string_view below = lines[i];
      const std::size_t at = below.find_first_not_of(' ');
      found = at <= 3 && below[at] == underline &&
              below.find_first_not_of(std::string(1, underline) + " \t\r", at) == std::string_view::npos;
    }
    CHECK_MESSAGE(found, "no heading of level " << level << " at line " << number);
    title = line.substr(indent);
  }
  // A clipped title is cut at a character boundary within the first 77 bytes, then "...".
  const bool clipped = ends_with(shown, "...") && shown.size() >= max_outline_title_bytes - 3;
  if (clipped) {
    shown.resize(shown.size() - 3);
    CHECK(shown.size() <= max_outline_title_bytes - 3);
    if (valid_utf8(title)) CHECK(valid_utf8(shown));
  } else {
    CHECK(shown.size() <= max_outline_title_bytes);
  }
  CHECK(!shown.empty());
  CHECK_MESSAGE(outline_shown(title).find(shown) != std::string::npos, "the title is not the line's");
}

// The outline block `block` of a cut whose omitted lines are first..last, read as a parent
// would: every entry names the line its heading starts on, within the omitted lines and in
// order; the block is within an eighth of each limit; a heading of a level is left out only
// when every one listed is of that level or a higher one; the "more" line names the command
// that lists them all. Returns the entries' line numbers.
inline std::vector<std::size_t> check_outline(const std::vector<std::string_view>& block, std::string_view text,
                                              const projection_limits& limits, const artifact_ref& artifact,
                                              std::size_t first, std::size_t last, const projection& p) {
  static const std::regex entry(R"(^  (\d+) (#{1,6}) (.*)$)");
  static const std::regex more(R"(^  \+(\d+) more \(levels? (\d)(?:-(\d))?\)(.*)\]$)");
  std::size_t bytes = 0;
  for (const std::string_view line : block) bytes += line.size() + 1;
  if (block.empty()) {
    CHECK(p.outline_listed == 0);
    CHECK(p.outline_left_out == 0);
    return {};
  }
  CHECK(bytes <= limits.max_bytes / 8);
  CHECK(block.size() <= limits.max_lines / 8);
  const std::string header = std::string(outline_prefix) +
                             (artifact.saved ? std::string(artifact.profile->line_jump) + "):" : "not saved):");
  CHECK(block.front() == header);
  const std::vector<std::string_view> lines = split_lines(text);
  std::vector<std::size_t> listed;
  std::size_t highest_listed = 0;
  std::size_t left_out = 0;
  for (std::size_t i = 1; i < block.size(); ++i) {
    std::string line(block[i]);
    std::smatch m;
    if (i + 1 == block.size() && std::regex_match(line, m, more)) {
      left_out = std::stoul(m[1].str());
      CHECK(left_out > 0);
      const std::size_t lowest = std::stoul(m[2].str());
      CHECK(highest_listed <= lowest);
      const std::string rest = m[4].str();
      if (artifact.saved) {
        std::string command = ": " + std::string(artifact.profile->bash_tool) + " `";
        append_shell_word(command, artifact.reader);
        command += " read --outline " + std::to_string(first) + "-" + std::to_string(last) + " ";
        append_shell_word(command, artifact.path);
        CHECK(rest == command + "`");
      } else {
        CHECK(rest == ", not listed");
      }
      continue;
    }
    if (i + 1 == block.size()) {
      REQUIRE(ends_with(line, "]"));
      line.pop_back();
    }
    REQUIRE_MESSAGE(std::regex_match(line, m, entry), "not an outline entry: " << line);
    const std::size_t number = std::stoul(m[1].str());
    CHECK(number >= first);
    CHECK(number <= last);
    if (!listed.empty()) CHECK(number > listed.back());
    listed.push_back(number);
    highest_listed = std::max(highest_listed, static_cast<std::size_t>(m[2].length()));
    check_heading_at(lines, number, static_cast<std::size_t>(m[2].length()), m[3].str());
  }
  CHECK(p.outline_listed == listed.size());
  CHECK(p.outline_left_out == left_out);
  return listed;
}

// The omitted lines a footer names: first..last, 1-based.
struct omitted_range {
  std::size_t first = 0;
  std::size_t last = 0;
};

// Every promise of a cut projection `p` of `text`. The omitted range and the calls that read
// it back are parsed from the footer text, the head and tail from the projection text; the
// struct must agree with both, and following the calls in Pi's tools (pi_read_reference.hpp)
// must give back the omitted lines byte for byte, each call uncut and not refused.
inline omitted_range check_cut(std::string_view text, const projection_limits& limits,
                               const artifact_ref& artifact, const projection& p) {
  REQUIRE(p.truncated);
  const std::string& out = p.text;
  CHECK(out.size() <= limits.max_bytes);
  CHECK(split_lines(out).size() <= limits.max_lines);
  if (valid_utf8(text)) CHECK(valid_utf8(out));
  if (text.find(replacement_char) == std::string_view::npos) {
    CHECK(out.find(replacement_char) == std::string::npos);
  }

  const bool final_newline = !text.empty() && text.back() == '\n';
  const projection_parts parts = split_projection(out, final_newline);
  const std::optional<footer_reads> reads = parse_footer(parts.footer);
  REQUIRE(reads.has_value());
  CHECK(reads->saved == artifact.saved);
  const std::vector<std::string_view> lines = split_lines(text);
  const std::size_t total = lines.size();
  REQUIRE(reads->first >= 1);
  REQUIRE(reads->first <= reads->last);
  REQUIRE(reads->last <= total);

  // Lines before the omitted range are the head's whole lines; a partly shown line counts as
  // omitted, so it can only be the one right after them (and likewise for the tail).
  const std::size_t head_whole = reads->first - 1;
  const std::size_t last_omitted = reads->last;
  const std::size_t tail_whole = total - last_omitted;
  REQUIRE(parts.head.size() >= head_whole);
  REQUIRE(parts.head.size() <= head_whole + 1);
  REQUIRE(parts.tail.size() >= tail_whole);
  REQUIRE(parts.tail.size() <= tail_whole + 1);
  const bool head_partial = parts.head.size() > head_whole;
  const bool tail_partial = parts.tail.size() > tail_whole;
  // The tail always keeps the last line with content when the text ends in '\n' (and the
  // omitted range leaves one).
  if (final_newline && last_omitted + 1 < total) CHECK(tail_whole >= 2);

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

  // The omitted lines, read back by following the footer's calls (or the calls its plan
  // command lists) in Pi's tools.
  const std::vector<std::string_view> omitted(lines.begin() + static_cast<std::ptrdiff_t>(head_whole),
                                              lines.begin() + static_cast<std::ptrdiff_t>(last_omitted));
  if (reads->saved) {
    CHECK(reads->plan == reads->calls.empty());
    if (reads->plan) {
      CHECK(reads->plan_path == artifact.path);
      CHECK(reads->plan_reader == artifact.reader);
      const std::vector<footer_call> listed =
          parse_calls(plan_listing(text, reads->first, reads->last, artifact.path, artifact.reader));
      CHECK(!listed.empty());
      CHECK(follow_calls(text, artifact.path, listed) == join_lines(omitted));
    } else {
      CHECK(reads->calls.size() <= max_listed_reads);
      for (const footer_call& c : reads->calls) {
        if (c.bytes) CHECK(c.reader == artifact.reader);
      }
      CHECK(follow_calls(text, artifact.path, reads->calls) == join_lines(omitted));
    }
  }

  // Head, the omitted lines and tail rebuild the text.
  std::vector<std::string_view> rebuilt(
      parts.head.begin(), parts.head.begin() + static_cast<std::ptrdiff_t>(head_whole));
  rebuilt.insert(rebuilt.end(), omitted.begin(), omitted.end());
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
  CHECK(p.omitted_first == reads->first);
  CHECK(p.omitted_count == reads->last - reads->first + 1);
  CHECK(p.head_bytes == (parts.head.empty() ? 0 : head_text.size() + (head_partial ? 0 : 1)));
  CHECK(p.tail_bytes == tail_text.size());
  CHECK(text.substr(0, p.head_bytes) == out.substr(0, p.head_bytes));

  // What the footer may say about the artifact.
  if (artifact.saved) {
    CHECK(out.find(artifact.path) != std::string::npos);
  } else {
    CHECK(parts.footer.find("NOT saved") != std::string::npos);
    if (!artifact.path.empty()) CHECK(out.find(artifact.path) == std::string::npos);
  }
  const std::string range = reads->first == reads->last ? "line " + std::to_string(reads->first)
                                                        : "lines " + std::to_string(reads->first) + "-" +
                                                              std::to_string(last_omitted);
  CHECK(parts.marker.find(range + " of " + std::to_string(total) + ",") != std::string_view::npos);
  check_outline(parts.outline, text, limits, artifact, reads->first, reads->last, p);
  if (!limits.outline) CHECK(parts.outline.empty());
  return {reads->first, reads->last};
}

}  // namespace handoff::test
