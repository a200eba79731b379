// A bounded head + tail projection of one final text (docs/design.md §3).
//
// The whole projected text (head, omission marker, tail, footer, artifact path) never exceeds
// `max_bytes` bytes nor `max_lines` lines. Cuts fall on line boundaries; only a single line
// longer than its share is cut inside, and never inside a UTF-8 sequence. Lines are numbered
// like Pi's `read`: text.split("\n"), 1-based. A text ending in '\n' keeps its last line with
// content in the tail: the empty line after the final '\n' costs the tail nothing.
//
// When the omitted lines hold markdown headings, an outline after the marker lists them with the
// line each starts on (outline.hpp), within an eighth of each limit: the head and tail are cut
// once more to leave it room, so a text whose omitted lines hold no heading is projected as if
// there were no outline.
//
// The footer names the omitted lines and the calls that read them back, each returning exactly
// its lines uncut in Pi 1.6.0 (projection_notice.hpp, text_page.hpp's read_plan): Pi `read`
// pages of at most 2000 lines and 50 KiB, and `handoff read --bytes` ranges through Pi's `bash`
// for a line over 50 KiB, or, when they are many, the `handoff read --plan` command that lists
// them. Deterministic, one pass (no retry), linear in the input.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "engine/store/artifact_ref.hpp"
#include "engine/text/projection_limits.hpp"
#include "engine/text/text_shape.hpp"

namespace handoff {

struct projection {
  std::string text;               // what the parent model reads; the input itself when !truncated
  bool truncated = false;
  text_shape total;               // the full text's bytes and lines
  std::size_t head_lines = 0;     // lines 1..head_lines are shown whole at the head
  std::size_t tail_lines = 0;     // the last tail_lines lines are shown whole at the tail
  std::size_t head_bytes = 0;     // bytes of the full text shown as head (partial line included)
  std::size_t tail_bytes = 0;     // bytes of the full text shown as tail (partial line included)
  bool head_partial = false;      // part of line head_lines+1 is shown after the whole lines
  bool tail_partial = false;      // part of the line before the tail's whole lines is shown
  std::size_t omitted_first = 0;  // first omitted line, 1-based (partly shown ones are omitted)
  std::size_t omitted_count = 0;  // omitted lines, partly shown ones included
  // The outline of the omitted lines (outline.hpp): headings it lists, and those it leaves out
  // for room; both 0 when it has none (no heading omitted, or no room for one).
  std::size_t outline_listed = 0;
  std::size_t outline_left_out = 0;
};

// True when `text` is within both limits: project() would return it byte for byte.
bool fits(std::string_view text, const projection_limits& limits) noexcept;
// The same, for a text of shape `total` (known without scanning it again).
bool fits(text_shape total, const projection_limits& limits) noexcept;

// Projects `text`. When it fits, returns it unchanged (`artifact` is ignored). Otherwise
// returns head + marker + tail + footer; the footer names `artifact.path` and the calls that
// read the omitted lines back when `artifact.saved`, or says the full text was not saved and why.
// Throws std::invalid_argument when a cut is needed and the limits are below the minimums or
// too small to hold the marker and footer for this artifact.
projection project(std::string_view text, const projection_limits& limits,
                   const artifact_ref& artifact);
// The same for a text whose shape is already known (`total` must be measure(text): the queue
// measured it when it took the text). A cut then usually reads only the head, the tail and what
// lies near the cuts, so a large text held in a mapped file is not paged in whole. A `total`
// that cannot be the text's (another byte count, more lines than bytes + 1, a line count that
// makes the head and the tail overlap) is not used: the text is measured.
projection project(std::string_view text, const projection_limits& limits, const artifact_ref& artifact,
                   text_shape total);

// The smallest max_bytes at which project() can cut a text of shape `total` for `artifact`
// (never below min_projection_bytes): its marker and leanest footer, which grow with the
// artifact's path and the reader's, plus a minimal head and tail.
std::size_t min_cut_bytes(text_shape total, const artifact_ref& artifact);

}  // namespace handoff
