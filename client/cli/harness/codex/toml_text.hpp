// The text of a TOML file below its statements: key paths, quoted strings, the file checked by
// toml++, its line ends, and a block of lines taken out. What the table edit (config_toml.hpp)
// and the marked lines (toml_marked.hpp) are written with.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

namespace handoff::cli::codex {

// A key path: {"mcp_servers", "handoff"} for `[mcp_servers.handoff]`, each segment unquoted.
using toml_key = std::vector<std::string>;

// "a.b" for {"a", "b"}.
std::string toml_key_text(const toml_key& key);
// Whether `key` is `prefix` or lies below it.
bool toml_key_starts_with(const toml_key& key, const toml_key& prefix);

// `value` as a TOML basic string, quoted and escaped.
std::string toml_quoted(std::string_view value);

// `text` parsed by toml++ (TOML 1.1, what Codex reads). Throws std::runtime_error
// "WHERE:LINE: not valid TOML (...)" when it is not.
toml::table toml_parse_checked(const std::string& text, const std::string& where);

// "\r\n" when the text's lines end so (its first line decides), else "\n".
std::string toml_newline(const std::string& text);
// The line [begin, end) of `text` without its line end.
std::string_view toml_line(std::string_view text, std::size_t begin, std::size_t end);
// `text` without the lines [begin, end), and without the blank line before them when they stood
// at the end or between two blank lines: what appending added, taking out takes back.
std::string toml_cut(std::string text, std::size_t begin, std::size_t end);

}  // namespace handoff::cli::codex
