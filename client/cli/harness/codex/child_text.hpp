// The small text rules the subagents' parts share: what is kept of text from a process or a
// model (well-formed UTF-8, a tail, a first line) and the names handoff mcp makes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace handoff::cli::codex {

// `s` with every byte that is not part of well-formed UTF-8 replaced by '?': what a process
// printed goes to handoffd and into JSON, which take UTF-8 only.
std::string valid_text(std::string_view s);

// The last `most` bytes of `s`, from a character boundary.
std::string tail_text(std::string_view s, std::size_t most);

// The first non-blank line of `text`, cut to `most` bytes ("..." ending a cut one); "subagent"
// when there is none. For titles and list lines.
std::string first_line(std::string_view text, std::size_t most);

// A new child id: `cx-` and 6 random hex digits (the caller makes sure it is not taken).
std::string new_child_id();

// A file name for a parent thread id (a UUID from Codex): bytes other than [A-Za-z0-9.-] as '_'.
std::string file_name(std::string_view id);

}  // namespace handoff::cli::codex
