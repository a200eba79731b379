// The lines handoff marks as its own in a TOML file: a key set under a table, found again by its
// mark and taken out, every other byte of the file kept.
#pragma once

#include <string>
#include <string_view>

#include "cli/harness/codex/toml_text.hpp"

namespace handoff::cli::codex {

// A key of handoff's in a table it may share with the user (Codex's `[features]`): one line
// `KEY = VALUE  # added by handoff setup codex`, put under the table's own header (after its
// other keys' header line), or, with no such header, appended with a header marked the same way.
// The mark is how `handoff setup codex --remove` finds it again; nothing else of the table is
// touched.
struct toml_marked_key {
  toml_key table;     // {"features", "multi_agent_v2"}
  std::string key;    // "disable_native_tools", one bare key
  std::string value;  // TOML text: "true"
};
inline constexpr std::string_view toml_mark = "# added by handoff setup codex";

// `text` with `line` set. Unchanged when the table already sets the key (with the mark: an
// earlier setup; without it: the user's, whose value `users` gets as TOML text). Throws
// std::runtime_error "WHERE:LINE: ..." when the table cannot take the line: not a table, an
// inline table, or one defined by dotted keys.
std::string toml_with_marked(const std::string& text, const std::string& where, const toml_marked_key& line,
                             std::string* users);
// `text` without the lines marked handoff's: its keys, and a marked header with no key left under
// it (with the blank line before it, as an appended table is taken out).
std::string toml_without_marked(const std::string& text, const std::string& where);

}  // namespace handoff::cli::codex
