// Wording of the omission marker and the footer. Plain and short: under the wait surface's
// 512-byte floor the footer and its ~120-byte artifact path must still leave room for text.
//
//   [... middle omitted: lines 301-389 of 422, 20,123 bytes ...]
//   [Truncated: 36,997 bytes / 422 lines in full; shown: lines 1-300, lines 390-422.
//   Full text: /abs/dir/<sha256>.txt — omitted lines 301-389 in 1 call, each shown whole: read offset=301 limit=89.]
//
// with more calls "...in 3 calls, each shown whole: read offset=319 limit=898; read offset=1217
// limit=905; bash `'/usr/bin/handoff' read --bytes 51200-102400 '/abs/dir/<sha256>.txt'`.]", or,
// past max_listed_reads or the room left for them, "Full text saved; bash `'/usr/bin/handoff' read
// --plan 319-99000 '/abs/dir/<sha256>.txt'` lists the calls that read the omitted lines 319-99000
// back, each shown whole.]" The CLI is artifact.reader, quoted like the path; notice_bound()
// renders it too, so its length is reserved with the rest.
//
// Byte counts are grouped by thousands for people; line numbers and byte offsets in calls
// never are, because the model copies them straight into a tool call.
#include "engine/text/projection_notice.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <optional>
#include <string_view>

#include "utf8.hpp"

namespace handoff {

using namespace std::literals;

namespace {

using digit_buffer = std::array<char, std::numeric_limits<std::size_t>::digits10 + 2>;

// The decimal digits of n, in `buffer`.
std::string_view digits_of(std::size_t n, digit_buffer& buffer) noexcept {
  const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), n);
  static_cast<void>(ec);  // the buffer holds every size_t
  return {buffer.data(), static_cast<std::size_t>(end - buffer.data())};
}

void append_number(std::string& out, std::size_t n) {
  digit_buffer buffer;
  out += digits_of(n, buffer);
}

// 36997 -> "36,997".
void append_grouped(std::string& out, std::size_t n) {
  digit_buffer buffer;
  const std::string_view digits = digits_of(n, buffer);
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
}

// "1 byte", "36,997 bytes".
void append_bytes(std::string& out, std::size_t n) {
  append_grouped(out, n);
  out += n == 1 ? " byte"sv : " bytes"sv;
}

// The largest number with as many digits as n (999 for 422): no number <= n prints wider.
std::size_t widest(std::size_t n) noexcept {
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  std::size_t all_nines = 9;
  while (all_nines < n) {
    if (all_nines > (max - 9) / 10) return max;
    all_nines = all_nines * 10 + 9;
  }
  return all_nines;
}

void append_span(std::string& out, line_span span) {
  out += span.first == span.last ? "line "sv : "lines "sv;
  append_number(out, span.first);
  if (span.first != span.last) {
    out.push_back('-');
    append_number(out, span.last);
  }
}

void append_shown(std::string& out, const notice_numbers& n) {
  const std::size_t before = out.size();
  const auto separate = [&] {
    if (out.size() > before) out += ", "sv;
  };
  if (n.head.first != 0) append_span(out, n.head);
  if (n.head_part_line != 0) {
    separate();
    out += "start of line "sv;
    append_number(out, n.head_part_line);
  }
  if (n.tail_part_line != 0) {
    separate();
    out += "end of line "sv;
    append_number(out, n.tail_part_line);
  }
  if (n.tail.first != 0) {
    separate();
    append_span(out, n.tail);
  }
  if (out.size() == before) out += "nothing"sv;
}

// The error as one line of at most max_notice_reason_bytes bytes.
void append_reason(std::string& out, std::string_view error) {
  if (error.empty()) error = "no reason given";
  const bool clipped = error.size() > max_notice_reason_bytes;
  if (clipped) error = error.substr(0, utf8_floor(error, max_notice_reason_bytes - 3));
  for (const char c : error) {
    const auto byte = static_cast<unsigned char>(c);
    out.push_back(byte < 0x20U || byte == 0x7FU ? ' ' : c);
  }
  if (clipped) out += "..."sv;
}

void append_calls(std::string& out, const notice_numbers& n, const artifact_ref& artifact) {
  const std::string& path = artifact.path;
  if (n.reads.empty()) {
    out += "Full text saved; "sv;
    out += artifact.profile->bash_tool;
    out += " `"sv;
    append_shell_word(out, artifact.reader);
    out += " read"sv;
    append_reader_option(out, *artifact.profile);
    out += " --plan "sv;
    append_number(out, n.omitted.first);
    out.push_back('-');
    append_number(out, n.omitted.last);
    out.push_back(' ');
    append_shell_word(out, path);
    out += "` lists the calls that read the omitted "sv;
    append_span(out, n.omitted);
    out += " back, each shown whole.]"sv;
    return;
  }
  out += "Full text: "sv;
  out += path;
  out += " \xE2\x80\x94 omitted "sv;
  append_span(out, n.omitted);
  out += " in "sv;
  append_number(out, n.reads.size());
  out += n.reads.size() == 1 ? " call"sv : " calls"sv;
  out += ", each shown whole: "sv;
  for (std::size_t i = 0; i < n.reads.size(); ++i) {
    if (i > 0) out += "; "sv;
    append_read_call(out, n.reads[i], path, artifact.reader, *artifact.profile);
  }
  out += ".]"sv;
}

}  // namespace

void append_read_call(std::string& out, const read_step& step, std::string_view path,
                      std::string_view reader, const reader_profile& profile) {
  if (step.bytes) {
    out += profile.bash_tool;
    out += " `"sv;
    append_shell_word(out, reader);
    out += " read --bytes "sv;
    append_number(out, step.first_byte);
    out.push_back('-');
    append_number(out, step.end_byte);
    out.push_back(' ');
    append_shell_word(out, path);
    out.push_back('`');
    return;
  }
  if (profile.lines_by_shell) {
    out += profile.bash_tool;
    out += " `sed -n '"sv;
    append_number(out, step.first_line);
    out.push_back(',');
    append_number(out, step.last_line);
    out += "p' "sv;
    append_shell_word(out, path);
    out.push_back('`');
    return;
  }
  if (profile.line_args == reader_profile::range_args::start_end) {
    out += profile.read_tool;
    out += " start_line="sv;
    append_number(out, step.first_line);
    out += " end_line="sv;
    append_number(out, step.last_line);
    return;
  }
  if (profile.line_args == reader_profile::range_args::view_range) {
    out += profile.read_tool;
    out += " view_range=["sv;
    append_number(out, step.first_line);
    out.push_back(',');
    append_number(out, step.last_line);
    out.push_back(']');
    return;
  }
  out += profile.read_tool;
  out += " offset="sv;
  append_number(out, step.first_line);
  out += " limit="sv;
  append_number(out, step.last_line - step.first_line + 1);
}

void append_reader_option(std::string& out, const reader_profile& profile) {
  if (&profile == &pi_reader) return;
  out += " --reader "sv;
  out += profile.name;
}

void append_marker(std::string& out, const notice_numbers& n) {
  out += "[... middle omitted: "sv;
  append_span(out, n.omitted);
  out += " of "sv;
  append_number(out, n.total.lines);
  out += ", "sv;
  append_bytes(out, n.omitted_bytes);
  out += " ...]"sv;
}

namespace {

// The footer's first line: "[Truncated: ... in full; shown: ...." and its '\n'.
void append_summary(std::string& out, const notice_numbers& n) {
  out += "[Truncated: "sv;
  append_bytes(out, n.total.bytes);
  out += " / "sv;
  append_number(out, n.total.lines);
  out += n.total.lines == 1 ? " line"sv : " lines"sv;
  out += " in full; shown: "sv;
  append_shown(out, n);
  out += ".\n"sv;
}

// The rest: how to read the omitted lines back, or why they cannot be.
void append_access(std::string& out, const notice_numbers& n, const artifact_ref& artifact) {
  if (artifact.saved) {
    append_calls(out, n, artifact);
    return;
  }
  out += "Full text NOT saved ("sv;
  append_reason(out, artifact.error);
  out += "); the omitted "sv;
  append_span(out, n.omitted);
  out += " cannot be read back.]"sv;
}

}  // namespace

void append_footer(std::string& out, const notice_numbers& n, const artifact_ref& artifact) {
  append_summary(out, n);
  append_access(out, n, artifact);
}

std::size_t read_steps_bound(text_shape total, const reader_profile& profile) noexcept {
  // Greedy pages of a run of short lines come in pairs that hold more than a page's bytes or
  // lines between them: at most 2 (B / 51,201 + N / 2,001) + 1 pages per run. A line of n >
  // 50 KiB bytes takes at most 2 (n / 51,197) ranges (each but its last holds 51,197 bytes or
  // more), and splits the runs: at most B / 51,201 long lines, so one run more than that.
  // With a prefix per line, a page of short lines holds fewer bytes: at worst a line of one
  // byte costs 2 + prefix, so pages hold at least (page_bytes + 1) / (2 + prefix) lines; the
  // bound counts lines against the smaller of that and the page's line cap.
  const std::size_t min_range = profile.page_bytes - 3;
  const std::size_t page_lines =
      profile.line_prefix_bytes == 0
          ? profile.page_lines
          : std::min(profile.page_lines, (profile.page_bytes + 1) / (2 + profile.line_prefix_bytes));
  // A reader that cuts lines shorter than a page (line_bytes): each line over its cap adds a
  // range and splits a run, and there are at most B / (cap + 1) of them.
  const std::size_t cut_lines = profile.line_bytes == 0 ? 0 : total.bytes / (line_cap(profile) + 1);
  return 3 * (total.bytes / min_range) + 2 * (total.lines / (page_lines + 1)) + 2 * cut_lines + 1;
}

footer_plan footer_room_for(text_shape total, const projection_limits& limits, const artifact_ref& artifact) {
  if (!artifact.saved) return {footer_room{}, notice_bound(total, artifact, footer_room{})};
  // Lines over 50 KiB for certain (the average line is): reserve room for byte ranges.
  const bool long_lines = total.bytes / total.lines > line_cap(*artifact.profile);
  footer_plan plan{{std::min(read_steps_bound(total, *artifact.profile), max_listed_reads), long_lines, true}, {}};
  plan.notices = notice_bound(total, artifact, plan.room);
  // Each bound renders the notices: the plan command's alone is rendered only when the eighth
  // is not room enough (most often one call is listed, and fits).
  std::optional<std::size_t> most;
  while (plan.room.listed_reads > 0 && plan.notices.bytes > limits.max_bytes / 8) {
    if (!most) most = std::max(notice_bound(total, artifact, footer_room{}).bytes, limits.max_bytes / 8);
    if (plan.notices.bytes <= *most) break;
    --plan.room.listed_reads;
    plan.notices = notice_bound(total, artifact, plan.room);
  }
  return plan;
}

notice_size notice_bound(text_shape total, const artifact_ref& artifact, const footer_room& room) {
  // first != last everywhere, so every span prints as the longer "lines a-b" form; widest(n)
  // - 1 has as many digits as widest(n) because widest(n) >= 9.
  const std::size_t line = widest(total.lines);
  const line_span span{line - 1, line};
  notice_numbers worst;
  worst.total = total;
  worst.head = {1, line};
  worst.head_part_line = line;
  worst.tail_part_line = line;
  worst.tail = span;
  worst.omitted = span;
  worst.omitted_bytes = widest(total.bytes);

  // The marker and the footer's first line are the same whatever calls follow: rendered once,
  // each way of reading back after them in turn.
  std::string text;
  text.reserve(1024);
  append_marker(text, worst);
  text.push_back('\n');
  append_summary(text, worst);
  const std::size_t common = text.size();
  const auto measure_with = [&](const notice_numbers& numbers) {
    text.resize(common);
    append_access(text, numbers, artifact);
    return notice_size{text.size(), measure(text).lines};
  };
  notice_size bound = measure_with(worst);  // the plan command, or the unsaved footer
  if (!room.plan_command) bound = {};
  if (room.listed_reads > 0) {
    // A read's offset is a line number and its limit at most a page; a range's ends are byte
    // offsets. Only the printed widths matter here.
    const std::size_t byte = widest(total.bytes);
    const std::size_t limit = widest(std::min(total.lines, artifact.profile->page_lines));
    const read_step widest_read = room.byte_ranges ? read_step{line, line, true, byte, byte}
                                                   : read_step{line, line + limit - 1, false, 0, 0};
    worst.reads.assign(room.listed_reads, widest_read);
    const notice_size listed = measure_with(worst);
    bound = {std::max(bound.bytes, listed.bytes), std::max(bound.lines, listed.lines)};
  }
  return bound;
}

}  // namespace handoff
