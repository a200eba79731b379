// The outline of a cut projection's omitted middle: its markdown headings (markdown_headings.hpp),
// each with the line of the full text it starts on, so the parent can read the one section it
// needs instead of paging through the whole middle (docs/protocol.md, "The outline").
//
//   [Omitted sections, at their lines of the full text (read offset=LINE):
//     212 ## 5. Root cause
//     260 ### 5.1 Timeline
//     +37 more (levels 3-4): bash `'handoff' read --outline 120-2890 '/abs/dir/<sha256>.txt'`]
//
// It stands right after the omission marker. Each entry is two spaces, the line number, the
// heading's level as '#' marks and its title, cut to max_outline_title_bytes at a character
// boundary (then ending in "..."), control characters shown as spaces and '[' ']' as '(' ')', so
// no entry can close the block or read as handoff's marker or footer. When every heading fits,
// the last entry ends in "]"; else the entries are chosen by level (all of level 1, then all of
// level 2, ... and of the first level that does not fit whole, as many as fit, spread evenly
// over the middle) and a last line says how many were left out and, when the full text was
// saved, the command that lists them all. The tools named are the artifact's reader profile's.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/store/artifact_ref.hpp"
#include "engine/text/markdown_headings.hpp"
#include "engine/text/projection_notice.hpp"

namespace handoff {

// Longest title an entry shows, in bytes.
inline constexpr std::size_t max_outline_title_bytes = 80;

struct outline_size {
  std::size_t bytes = 0;  // every line of the block with its '\n'
  std::size_t lines = 0;
};

// Appends one entry as `handoff read --outline` prints it: "LINE ## TITLE", no '\n'.
void append_outline_entry(std::string& out, const heading& h, std::string_view text);

class outline {
 public:
  // The outline of `headings`, the headings of the omitted lines `omitted` of `text` in order,
  // within `room`: every heading when they all fit, else those chosen by level; an empty
  // outline when there are no headings or not even the first line and the last fit.
  static outline choose(std::span<const heading> headings, std::string_view text, line_span omitted,
                        const artifact_ref& artifact, outline_size room);

  // The size of the outline that lists every one of `headings`.
  static outline_size full_size(std::span<const heading> headings, std::string_view text,
                                const artifact_ref& artifact);

  bool empty() const noexcept { return listed_.empty() && left_out_ == 0; }
  std::size_t listed() const noexcept { return listed_.size(); }
  std::size_t left_out() const noexcept { return left_out_; }
  outline_size size() const noexcept { return size_; }

  // Appends the block, each line followed by '\n'; exactly size() of it.
  void append_to(std::string& out) const;

 private:
  std::string_view text_;
  const artifact_ref* artifact_ = nullptr;
  line_span omitted_;
  std::vector<heading> listed_;  // in line order
  std::size_t left_out_ = 0;
  unsigned lowest_left_out_ = 0;   // the lowest and the highest level left out
  unsigned highest_left_out_ = 0;
  outline_size size_;
};

}  // namespace handoff
