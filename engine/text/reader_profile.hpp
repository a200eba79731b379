// How a parent's harness reads an artifact back: the page its file-reading tool returns uncut,
// the names of its tools, and what it adds to each line it shows. The footer's calls
// (projection_notice.hpp) and read_plan (text_page.hpp) are sized by it, so every call a footer
// names returns exactly its lines in that harness (docs/design.md §4).
//
// Two profiles, chosen by the parent's client (`reader` in subagent/wait, `handoff read
// --reader`):
//   pi           Pi 1.6.0's `read` and `bash`: a page is at most 2000 lines and 51,200 bytes of
//                the lines joined with "\n"; nothing is added to a line.
//   claude-code  Claude Code 2.1.328's `Read` and `Bash`: Read refuses a page its count_tokens
//                puts over 25,000 tokens and prefixes every line with its number and a tab. No
//                tokenizer makes more tokens than UTF-8 bytes, so a page of at most 20,000 bytes,
//                each line's 8-byte prefix counted, is under the cap with room for the framing,
//                for any text (ASCII or CJK). Bash shows 30,000 characters uncut; its byte
//                ranges are at most 20,000 bytes.
#pragma once

#include <cstddef>
#include <string_view>

namespace handoff {

struct reader_profile {
  std::string_view name;          // the wire name: "pi", "claude-code"
  std::string_view read_tool;     // the file-reading tool the footer names ("read", "Read")
  std::string_view bash_tool;     // the shell tool for byte ranges and the plan command
  std::size_t page_lines;         // most lines one read returns uncut
  std::size_t page_bytes;         // most bytes one read returns uncut: the lines, the "\n"
                                  // between them, and line_prefix_bytes per line
  std::size_t line_prefix_bytes;  // bytes the read tool adds to each line it shows (counted
                                  // against page_bytes)
  // What the harness wraps a delivered result in, counted against the caps so that what its
  // model reads stays within them: bytes around the whole result, and bytes added to each of
  // its lines. Pi shows a batch as it is (0, 0). Claude Code 2.1.328 frames an Agent's answer
  // in its "[Subagent hand-back]" notice and agentId line (measured: under 600 bytes with an
  // agentId of 17 characters and the hook's own note) and indents every line by two spaces.
  std::size_t frame_bytes;
  std::size_t line_indent_bytes;
};

inline constexpr reader_profile pi_reader{"pi", "read", "bash", 2000, 50 * 1024, 0, 0, 0};
inline constexpr reader_profile claude_code_reader{"claude-code", "Read", "Bash", 2000, 20000, 8, 768, 2};

// The profile named `name`, or nullptr for a name handoff does not know.
const reader_profile* find_reader_profile(std::string_view name) noexcept;

// The bytes a page of `lines` lines holding `text_bytes` bytes (the "\n" between them
// included) costs against page_bytes.
constexpr std::size_t page_cost(const reader_profile& profile, std::size_t text_bytes,
                                std::size_t lines) noexcept {
  return text_bytes + lines * profile.line_prefix_bytes;
}

}  // namespace handoff
