// The two notices a cut projection carries: the one-line omission marker between head and
// tail, and the footer at the end (totals, what is shown, where the full text is and the calls
// that read the omitted lines back uncut in Pi 1.6.0, or why it was not saved).
//
// The footer reads the omitted lines back one of two ways:
//   - listed: every call of their read_plan, when there are at most max_listed_reads: Pi `read`
//     calls (`read offset=N limit=M`) and, for a line over 50 KiB, `bash 'CLI' read --bytes
//     A-B 'PATH'` commands;
//   - planned: one `bash 'CLI' read --plan F-L 'PATH'` command that prints those calls.
// CLI is artifact_ref::reader, the `handoff` executable (an absolute path when resolved).
//
// Their size depends on the numbers they print, which depend on the cut, which depends on
// the room the notices leave. notice_bound() breaks that circle: it renders them with every
// number at the widest value it can take for a text of that shape and the widest calls the
// footer may list, so the projection reserves their room up front and cuts once.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "engine/store/artifact_ref.hpp"
#include "engine/text/projection_limits.hpp"
#include "engine/text/shell_word.hpp"  // the footers quote the CLI and the path with it
#include "engine/text/text_page.hpp"
#include "engine/text/text_shape.hpp"

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
  std::size_t omitted_bytes = 0;   // bytes of the full text not shown
  std::vector<read_step> reads;    // the calls that read `omitted` back; empty: the plan command
};

// Most calls the footer lists; more are printed by `handoff read --plan`.
inline constexpr std::size_t max_listed_reads = 8;

// Longest text of an artifact error the footer prints, in bytes (longer ones are cut at a
// character boundary and end with "..."); control characters print as spaces, so the footer's
// line count does not depend on the error.
inline constexpr std::size_t max_notice_reason_bytes = 160;

// Appends the marker line, without its '\n'.
void append_marker(std::string& out, const notice_numbers& numbers);

// Appends the footer, without a final '\n'. When `artifact.saved`, it names artifact.path and
// the calls in `reads`, or the plan command when there are none; otherwise it says the full text
// was not saved, why, and prints no path.
void append_footer(std::string& out, const notice_numbers& numbers, const artifact_ref& artifact);

struct notice_size {
  std::size_t bytes = 0;  // marker + '\n' + footer
  std::size_t lines = 0;  // marker line + footer lines
};

// What the footer of a cut may hold, for notice_bound().
struct footer_room {
  std::size_t listed_reads = 0;  // up to this many calls listed (0: only the plan command)
  bool byte_ranges = false;      // reserve them as wide as `handoff read --bytes` commands
  bool plan_command = true;      // the plan command may stand instead of a list
};

// An upper bound on the marker and footer of any cut of a text of shape `total` with this
// artifact whose footer holds what `room` says: each number printed at the widest width it can
// have, each optional part present, each listed call the widest kind.
notice_size notice_bound(text_shape total, const artifact_ref& artifact, const footer_room& room);

// At most how many calls a read_plan of a whole text of shape `total` has; a part's plan has
// no more (a greedy plan of a run of lines is never longer than the whole's).
std::size_t read_steps_bound(text_shape total, const reader_profile& profile = pi_reader) noexcept;

// The room project() reserves for the footer of a text of shape `total` under `limits`,
// without looking at the text: the plan command, and beside it as many calls as
// read_steps_bound() allows, up to max_listed_reads, while the notices stay within the larger
// of the plan command's room and an eighth of max_bytes. The calls are reserved as wide as
// `read` calls, or as byte-range commands when the average line is over 50 KiB. After the cut
// the footer lists the omitted lines' calls when they are that few and fit what the
// projection has left, else it names the plan command.
struct footer_plan {
  footer_room room;
  notice_size notices;  // notice_bound(total, artifact, room)
};
footer_plan footer_room_for(text_shape total, const projection_limits& limits, const artifact_ref& artifact);

// Appends one call as the footer and `handoff read --plan` print it: "read offset=N limit=M", or
// "bash `'READER' read --bytes A-B 'PATH'`" for a byte range of a line over 50 KiB, READER
// being the `handoff` CLI (artifact_ref::reader).
// For another profile than Pi's, the tool names are its own ("Read offset=N limit=M",
// "Bash `...`").
void append_read_call(std::string& out, const read_step& step, std::string_view path,
                      std::string_view reader, const reader_profile& profile = pi_reader);

// Appends " --reader NAME" for a profile other than Pi's (`handoff read --plan` then prints that
// profile's calls); nothing for Pi's, whose footers stay as they were.
void append_reader_option(std::string& out, const reader_profile& profile);

}  // namespace handoff
