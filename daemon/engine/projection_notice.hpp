// The two notices a cut projection carries: the one-line omission marker between head and
// tail, and the footer at the end (totals, what is shown, where the full text is and the exact
// Pi `read` call for the omitted lines, or why it was not saved).
//
// Their size depends on the numbers they print, which depend on the cut, which depends on
// the room the notices leave. notice_bound() breaks that circle: it renders them with every
// number at the widest value it can take for a text of that shape, so the projection reserves
// their room up front and cuts once.
#pragma once

#include <cstddef>
#include <string>

#include "engine/artifact_ref.hpp"
#include "engine/text_shape.hpp"

namespace handoff {

// A run of lines, 1-based and inclusive; printed "line 7" when first == last, else
// "lines 7-9". first == 0 means no lines (not printed).
struct line_span {
  std::size_t first = 0;
  std::size_t last = 0;
};

// Every number the notices print, each set independently so the bound can widen each one.
struct notice_numbers {
  text_shape total;                // the full text
  line_span head;                  // whole lines shown at the head (first is 1), or none
  std::size_t head_part_line = 0;  // line whose start is shown after the head, 0 if none
  std::size_t tail_part_line = 0;  // line whose end is shown before the tail, 0 if none
  line_span tail;                  // whole lines shown at the tail (last is total.lines), or none
  line_span omitted;               // lines not shown whole: the marker's range
  std::size_t read_offset = 0;     // the footer's read `offset`: first omitted line
  std::size_t read_limit = 0;      // the footer's read `limit`: count of omitted lines
  std::size_t omitted_bytes = 0;   // bytes of the full text not shown
};

// Longest text of an artifact error the footer prints, in bytes (longer ones are cut at a
// character boundary and end with "..."); control characters print as spaces, so the footer's
// line count does not depend on the error.
inline constexpr std::size_t max_notice_reason_bytes = 160;

// Appends the marker line, without its '\n'.
void append_marker(std::string& out, const notice_numbers& numbers);

// Appends the footer, without a final '\n'. When `artifact.saved`, it names artifact.path and
// the read call; otherwise it says the full text was not saved, why, and prints no path.
void append_footer(std::string& out, const notice_numbers& numbers, const artifact_ref& artifact);

struct notice_size {
  std::size_t bytes = 0;  // marker + '\n' + footer
  std::size_t lines = 0;  // marker line + footer lines
};

// An upper bound on the marker and footer of any cut of a text of shape `total` with this
// artifact: each number printed at the widest width it can have, each optional part present.
notice_size notice_bound(text_shape total, const artifact_ref& artifact);

}  // namespace handoff
