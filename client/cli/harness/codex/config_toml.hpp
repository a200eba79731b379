// A TOML file edited as text, one table at a time: the table at a key path (`[a.b]` and every
// `[a.b.*]` / `[[a.b.*]]` header, with their keys) replaced where it stands, appended at the end,
// or taken out, every other byte of the file kept (comments, order, blank lines, CRLF). The
// file is checked with toml++ first, as TOML 1.1 (what Codex reads); what handoff cannot edit so
// is refused with the line.
//
// A table's lines run from its header to its last key; comments and blank lines after that
// belong to what follows. Appending adds one blank line before the table (and a final newline
// when the file had none); taking a table out takes the blank line before it too when it stood
// at the end of the file or between two blank lines, so that appending and then removing gives
// back the file as it was (one that did not end in a newline gains it).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "cli/harness/codex/toml_text.hpp"

namespace handoff::cli::codex {

// A checked TOML file and the lines of one table in it.
class toml_config {
 public:
  // Parses `text` (toml++) and finds the table at `key`. `where` names the file in messages.
  // Throws std::runtime_error "WHERE:LINE: ..." when the text is not valid TOML, and when `key`
  // is defined other than by its own headers: as an inline table or a dotted key
  // (`handoff.command = ...` under `[mcp_servers]`), or as an array of tables.
  toml_config(std::string text, std::string where, toml_key key);

  const toml::table& root() const { return root_; }
  // Whether the file has the table, by its headers.
  bool has_table() const { return !spans_.empty(); }
  // "\r\n" when the file's lines end so (its first line decides), else "\n".
  std::string_view newline() const { return newline_; }

  // The file with `table` (lines ending in "\n": its header, then its keys) in place of the
  // key's table, where its first header stood, its other headers gone; or appended. Throws
  // std::runtime_error when the key cannot be added by a header (an inline parent table, a
  // parent that is not a table).
  std::string with_table(std::string_view table) const;
  // The file without the key's table.
  std::string without_table() const;

 private:
  struct span {
    std::size_t begin;  // offset of the first header's line
    std::size_t end;    // offset just past the line of the table's last key or header
  };

  std::string text_;
  std::string where_;
  toml_key key_;
  toml::table root_;
  std::string newline_;
  std::vector<span> spans_;  // the table's lines, in file order (its headers may be far apart)
};

}  // namespace handoff::cli::codex
