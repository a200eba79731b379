// A TOML file as statements: where each header and each key starts and ends, by line, so that
// an edit can take out or put in whole lines and keep every other byte. Comments and strings are
// skipped, so a `[x]` inside a multi-line string or an array is no header.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "cli/harness/codex/toml_text.hpp"

namespace handoff::cli::codex {

// One statement of a TOML file: a header, or a key and its value, and the lines it takes.
struct toml_statement {
  enum class kind { table, array_table, key_value };
  kind type = kind::key_value;
  toml_key path;          // the header's key; for a key, the table's key then the (dotted) key
  std::size_t line = 0;   // the line it starts on, from 1
  std::size_t begin = 0;  // offset of that line's start
  std::size_t end = 0;    // offset just past the newline of its last line (or the end of the text)
  std::size_t written = 0;  // a key's segments as written (2 for `a.b = 1`)
};

// The statements of `text`, one toml++ accepted, in file order. What the scanner does not
// recognise throws std::runtime_error "WHERE:LINE: handoff cannot read this TOML (...)".
std::vector<toml_statement> toml_statements(std::string_view text, const std::string& where);

}  // namespace handoff::cli::codex
