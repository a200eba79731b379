#include "cli/harness/codex/child_text.hpp"

#include <cctype>
#include <cstdio>
#include <mutex>
#include <random>

#include "utf8.hpp"

namespace handoff::cli::codex {

std::string valid_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    if (*p < 0x80) {
      out.push_back(static_cast<char>(*p++));
      continue;
    }
    const std::size_t n = utf8_sequence_length(p, end);
    if (n == 0) {
      out.push_back('?');
      ++p;
      continue;
    }
    out.append(reinterpret_cast<const char*>(p), n);
    p += n;
  }
  return out;
}

std::string tail_text(std::string_view s, std::size_t most) {
  if (s.size() <= most) return std::string(s);
  return std::string(s.substr(utf8_ceil(s, s.size() - most)));
}

std::string first_line(std::string_view text, std::size_t most) {
  const std::size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return "subagent";
  text.remove_prefix(start);
  text = text.substr(0, text.find('\n'));
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  if (text.size() <= most) return std::string(text);
  return std::string(text.substr(0, utf8_floor(text, most - 3))) + "...";
}

std::string new_child_id() {
  static std::mt19937_64 random{std::random_device{}()};
  static std::mutex guard;
  const std::lock_guard<std::mutex> hold(guard);
  char id[16];
  std::snprintf(id, sizeof id, "cx-%06llx", static_cast<unsigned long long>(random() & 0xFFFFFF));
  return id;
}

std::string file_name(std::string_view id) {
  std::string out;
  for (const char c : id) out.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_');
  return out.empty() ? std::string("_") : out;
}

}  // namespace handoff::cli::codex
