// project(): verbatim when the text fits, else head + marker + tail + footer in one pass.
//
// The output is a list of lines joined by '\n', with no '\n' after the last:
//
//   head whole lines | head partial line? | marker | tail partial line? | tail whole lines | footer
//
// so every shown line costs its bytes + 1 and one line, the notices cost what notice_bound()
// says at most, and the byte and line limits are met by construction, not by retrying.
//
// One exception: a text that ends in '\n' has an empty last line, and the tail always shows it
// for free: the text's own final '\n' ends the tail's other lines, and the empty line after it
// is where the footer starts. The tail's budget goes to the last line with content.
#include "engine/text/projection.hpp"

#include <string.h>  // memrchr: a GNU extension, declared by glibc's <string.h> only

#include <algorithm>
#include <cassert>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/text/markdown_headings.hpp"
#include "engine/text/outline.hpp"
#include "engine/text/projection_cut.hpp"
#include "engine/text/projection_notice.hpp"
#include "engine/text/text_page.hpp"

namespace handoff {
namespace {

// Least room the head and tail must have left after the notices: below this the projection
// would be all notice and no text, and the caller's limits are too small for this artifact.
constexpr std::size_t min_body_bytes = 32;  // output bytes for head + tail
constexpr std::size_t min_body_lines = 2;   // one line each for head and tail

constexpr double min_head_share = 0.05;
constexpr double max_head_share = 0.95;

bool within(text_shape shape, const projection_limits& limits) noexcept {
  return shape.bytes <= limits.max_bytes && shape.lines <= limits.max_lines;
}

void check_limits(const projection_limits& limits, const artifact_ref& artifact) {
  if (limits.max_bytes < min_projection_bytes) {
    throw std::invalid_argument("projection max_bytes " + std::to_string(limits.max_bytes) +
                                " is below the minimum of " + std::to_string(min_projection_bytes));
  }
  if (limits.max_lines < min_projection_lines) {
    throw std::invalid_argument("projection max_lines " + std::to_string(limits.max_lines) +
                                " is below the minimum of " + std::to_string(min_projection_lines));
  }
  if (!(limits.head_share >= min_head_share && limits.head_share <= max_head_share)) {
    throw std::invalid_argument("projection head_share " + std::to_string(limits.head_share) +
                                " is outside [0.05, 0.95]");
  }
  if (artifact.saved && artifact.path.empty()) {
    throw std::invalid_argument("artifact marked saved without a path");
  }
}

notice_numbers numbers_of(const body_cut& cut, text_shape total) {
  notice_numbers n;
  n.total = total;
  if (cut.head_lines > 0) n.head = {1, cut.head_lines};
  if (cut.head_partial) n.head_part_line = cut.head_lines + 1;
  const std::size_t last_omitted = total.lines - cut.tail_lines;
  if (cut.tail_partial) n.tail_part_line = last_omitted;
  if (cut.tail_lines > 0) n.tail = {last_omitted + 1, total.lines};
  n.omitted = {cut.head_lines + 1, last_omitted};
  n.omitted_bytes = cut.tail_start - cut.head_end;
  return n;
}

// The calls that read the omitted lines back, or none when they are more than `room` lists.
// A call returns at most 50 KiB and a '\n': more omitted bytes than that many calls can hold
// need more calls, and are not looked at.
std::vector<read_step> omitted_reads(std::string_view text, const body_cut& cut, std::size_t last_omitted,
                                     const footer_room& room, const reader_profile& profile) {
  if (cut.tail_start - cut.head_end > room.listed_reads * (profile.page_bytes + 1)) return {};
  std::size_t first_byte = cut.head_end;  // where line head_lines + 1 starts
  if (cut.head_partial) {
    const void* newline = cut.head_end == 0 ? nullptr : ::memrchr(text.data(), '\n', cut.head_end);
    first_byte = newline == nullptr ? 0 : static_cast<std::size_t>(static_cast<const char*>(newline) - text.data()) + 1;
  }
  // Most often the omitted lines are one page: then that is the plan, and nothing is scanned.
  std::size_t end_byte = text.size();  // where line last_omitted ends
  if (cut.tail_partial) {
    if (const void* newline = std::memchr(text.data() + cut.tail_start, '\n', text.size() - cut.tail_start))
      end_byte = static_cast<std::size_t>(static_cast<const char*>(newline) - text.data());
  } else if (cut.tail_lines > 0) {
    end_byte = cut.tail_start - 1;
  }
  const std::size_t first_line = cut.head_lines + 1;
  const std::size_t lines = last_omitted - first_line + 1;
  // A reader that cuts long lines (line_bytes) needs every line looked at: no shortcut.
  if (profile.line_bytes == 0 && page_cost(profile, end_byte - first_byte, lines) <= profile.page_bytes &&
      lines <= profile.page_lines) {
    if (room.listed_reads == 0) return {};
    return {read_step{first_line, last_omitted, false, first_byte, end_byte}};
  }
  read_plan plan(text, first_line, first_byte, last_omitted, profile);
  std::vector<read_step> reads;
  while (const std::optional<read_step> step = plan.next()) {
    if (reads.size() == room.listed_reads) return {};
    reads.push_back(*step);
  }
  return reads;
}

line_span omitted_of(const body_cut& cut, std::size_t total_lines) noexcept {
  return {cut.head_lines + 1, total_lines - cut.tail_lines};
}

// The headings of `headings` (in line order) that start on a line of `span`.
std::span<const heading> starting_in(std::span<const heading> headings, line_span span) noexcept {
  const auto first = std::partition_point(headings.begin(), headings.end(),
                                          [&](const heading& h) { return h.line < span.first; });
  const auto last = std::partition_point(first, headings.end(), [&](const heading& h) { return h.line <= span.last; });
  return {first, last};
}

struct outlined_cut {
  body_cut cut;
  outline listing;
};

// When the lines `cut` omits hold a heading: a cut that leaves room for their outline, and the
// outline. The outline may take an eighth of each limit; when the headings of the middle that
// room would leave fit in less, the cut leaves only what they take, so that a short outline
// costs the head and tail no more than its own size. None when no heading is omitted or no
// outline fits (the projection is then made as if there were no outline).
std::optional<outlined_cut> cut_with_outline(std::string_view text, std::size_t total_lines,
                                             const projection_limits& limits, body_budget budget,
                                             const body_cut& cut, const artifact_ref& artifact,
                                             const heading_scan& scanned) {
  const outline_size most{limits.max_bytes / 8, limits.max_lines / 8};
  if (budget.bytes < most.bytes + min_body_bytes || budget.lines < most.lines + min_body_lines) return std::nullopt;
  const std::vector<heading>& headings = scanned.headings;
  if (starting_in(headings, omitted_of(cut, total_lines)).empty()) return std::nullopt;
  const auto recut = [&](outline_size room) {
    return cut_body(text, total_lines, {budget.bytes - room.bytes, budget.lines - room.lines}, limits.head_share,
                    &scanned.newlines);
  };
  outlined_cut result{recut(most), outline{}};
  const outline_size full =
      outline::full_size(starting_in(headings, omitted_of(result.cut, total_lines)), text, artifact);
  outline_size room = most;
  if (full.bytes <= most.bytes && full.lines <= most.lines) {
    room = full;
    result.cut = recut(room);
  }
  const line_span omitted = omitted_of(result.cut, total_lines);
  result.listing = outline::choose(starting_in(headings, omitted), text, omitted, artifact, room);
  if (result.listing.empty()) return std::nullopt;
  return result;
}

}  // namespace

bool fits(std::string_view text, const projection_limits& limits) noexcept {
  // A text over the byte limit needs no line count.
  return text.size() <= limits.max_bytes && within(measure(text), limits);
}

bool fits(text_shape total, const projection_limits& limits) noexcept { return within(total, limits); }

std::size_t min_cut_bytes(text_shape total, const artifact_ref& artifact) {
  // The room project() settles on when the limit leaves the footer no more than its least.
  projection_limits least;
  least.max_bytes = 0;
  const notice_size notices = footer_room_for(total, least, artifact).notices;
  return std::max(min_projection_bytes, notices.bytes + min_body_bytes);
}

namespace {

// project() for a text of shape `total`, whose headings and '\n' bytes near its ends are
// `scanned` when already known.
projection project_with(std::string_view text, const projection_limits& limits, const artifact_ref& artifact,
                        text_shape total, const heading_scan* scanned) {
  projection result;
  result.total = measure(text, total);
  if (within(result.total, limits)) {
    result.text = text;
    result.head_lines = result.total.lines;
    result.head_bytes = result.total.bytes;
    return result;
  }
  check_limits(limits, artifact);

  const auto [room, notices] = footer_room_for(result.total, limits, artifact);
  if (limits.max_bytes < notices.bytes + min_body_bytes ||
      limits.max_lines < notices.lines + min_body_lines) {
    throw std::invalid_argument("projection limits of " + std::to_string(limits.max_bytes) +
                                " bytes / " + std::to_string(limits.max_lines) +
                                " lines leave no room for text beside the " +
                                std::to_string(notices.bytes) + "-byte marker and footer");
  }
  const body_budget budget{limits.max_bytes - notices.bytes, limits.max_lines - notices.lines};
  // The outline needs the text's headings: the pass that finds them keeps the '\n' bytes the
  // cut looks for too.
  std::optional<heading_scan> own_scan;
  if (limits.outline && scanned == nullptr) scanned = &own_scan.emplace(scan_headings(text, limits.max_bytes));
  body_cut cut = cut_body(text, result.total.lines, budget, limits.head_share,
                          scanned == nullptr ? nullptr : &scanned->newlines);
  // The caller's line count is trusted, not checked (that would take the scan it saves); one
  // that leaves the head and the tail overlapping cannot be this text's: count after all.
  const auto overlapping = [&](const body_cut& c) {
    return c.head_end > c.tail_start || c.head_lines + c.tail_lines > result.total.lines;
  };
  std::optional<outlined_cut> outlined;
  if (scanned != nullptr && !overlapping(cut)) {
    outlined = cut_with_outline(text, result.total.lines, limits, budget, cut, artifact, *scanned);
  }
  if (outlined) {
    cut = outlined->cut;
    result.outline_listed = outlined->listing.listed();
    result.outline_left_out = outlined->listing.left_out();
  }
  if (overlapping(cut)) {
    const text_shape measured = measure(text);
    if (measured.lines == result.total.lines) throw std::logic_error("project: the head and the tail overlap");
    return project_with(text, limits, artifact, measured, nullptr);
  }

  result.truncated = true;
  result.head_lines = cut.head_lines;
  result.tail_lines = cut.tail_lines;
  result.head_bytes = cut.head_end;
  result.tail_bytes = text.size() - cut.tail_start;
  result.head_partial = cut.head_partial;
  result.tail_partial = cut.tail_partial;
  result.omitted_first = cut.head_lines + 1;
  result.omitted_count = result.total.lines - cut.tail_lines - cut.head_lines;

  notice_numbers numbers = numbers_of(cut, result.total);
  if (artifact.saved) numbers.reads = omitted_reads(text, cut, numbers.omitted.last, room, *artifact.profile);
  std::string& out = result.text;
  out.reserve(limits.max_bytes);
  out.append(text.substr(0, cut.head_end));
  if (cut.head_partial) out.push_back('\n');
  append_marker(out, numbers);
  out.push_back('\n');
  if (outlined) outlined->listing.append_to(out);
  if (cut.tail_lines > 0 || cut.tail_partial) {
    out.append(text.substr(cut.tail_start));
    if (text.back() != '\n') out.push_back('\n');
  }
  // The listed calls are used when they fit what is left; the plan command always does (its
  // room is reserved).
  std::string footer;
  append_footer(footer, numbers, artifact);
  if (out.size() + footer.size() > limits.max_bytes) {
    numbers.reads.clear();
    footer.clear();
    append_footer(footer, numbers, artifact);
  }
  out += footer;
  assert(out.size() <= limits.max_bytes);
  return result;
}

}  // namespace

projection project(std::string_view text, const projection_limits& limits, const artifact_ref& artifact) {
  // A text over the byte limit is cut, and the cut's outline needs its headings: the pass that
  // finds them counts the lines too, in place of measure().
  if (limits.outline && text.size() > limits.max_bytes) {
    const heading_scan scan = scan_headings(text, limits.max_bytes);
    return project_with(text, limits, artifact, {text.size(), scan.lines}, &scan);
  }
  return project_with(text, limits, artifact, measure(text), nullptr);
}

projection project(std::string_view text, const projection_limits& limits, const artifact_ref& artifact,
                   text_shape total) {
  return project_with(text, limits, artifact, total, nullptr);
}

}  // namespace handoff
