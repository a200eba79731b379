#include "cli/harness/codex/toml_text.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace handoff::cli::codex {
namespace {

bool toml_blank_line(std::string_view line) { return line.find_first_not_of(" \t\r\n") == std::string_view::npos; }

}  // namespace

std::string toml_key_text(const toml_key& key) {
  std::string out;
  for (const std::string& segment : key) {
    if (!out.empty()) out += '.';
    out += segment;
  }
  return out;
}

bool toml_key_starts_with(const toml_key& key, const toml_key& prefix) {
  return key.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), key.begin());
}

std::string toml_quoted(std::string_view value) {
  std::string out = "\"";
  for (const char c : value) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04X", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

toml::table toml_parse_checked(const std::string& text, const std::string& where) {
  try {
    return toml::parse(text, where);
  } catch (const toml::parse_error& e) {
    throw std::runtime_error(where + ":" + std::to_string(e.source().begin.line) + ": not valid TOML (" +
                             std::string(e.description()) + "); fix it first (nothing was changed)");
  }
}

std::string toml_newline(const std::string& text) {
  const std::size_t first = text.find('\n');
  return first != std::string::npos && first > 0 && text[first - 1] == '\r' ? "\r\n" : "\n";
}

std::string_view toml_line(std::string_view text, std::size_t begin, std::size_t end) {
  std::string_view line = text.substr(begin, end - begin);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  return line;
}

std::string toml_cut(std::string text, std::size_t begin, std::size_t end) {
  text.erase(begin, end - begin);
  if (begin == 0 || text[begin - 1] != '\n') return text;
  const std::size_t before = begin >= 2 ? text.rfind('\n', begin - 2) : std::string::npos;
  std::size_t previous = before == std::string::npos ? 0 : before + 1;
  if (previous == 0 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) previous = 3;
  if (!toml_blank_line(std::string_view(text).substr(previous, begin - previous))) return text;
  const std::size_t next_end = text.find('\n', begin);
  const std::string_view next =
      std::string_view(text).substr(begin, next_end == std::string::npos ? std::string::npos : next_end + 1 - begin);
  if (begin == text.size() || toml_blank_line(next)) text.erase(previous, begin - previous);
  return text;
}

}  // namespace handoff::cli::codex
