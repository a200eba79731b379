// Files as text for the CLI tests, and the long subagent answer the real-binary suites use too
// (longAnswer in tests/support/world.mjs).
#pragma once

#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace handoff::test {

// The lines of `text` as Pi's read numbers them: text.split("\n").
inline std::vector<std::string> text_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t at = 0;
  for (std::size_t nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) lines.push_back(text.substr(at, nl - at));
  lines.push_back(text.substr(at));
  return lines;
}

// The file's bytes; "" when it cannot be read (the tests check absence this way too).
inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Writes `text` to `path`, making its parent directories first.
inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// `lines` lines of `width` bytes ("finding 0001 xxx...", each prefixed with `tag`), the last
// one the verdict: what a harness cuts head-only and handoff must keep.
inline std::string long_answer(int lines, int width, const std::string& tag = "") {
  std::string out;
  for (int i = 1; i < lines; ++i) {
    char n[12];  // room for any int, so the compiler sees no truncation
    std::snprintf(n, sizeof n, "%04d", i);
    out += tag + "finding " + n + " " + std::string(static_cast<std::size_t>(width - 14 - static_cast<int>(tag.size())), 'x') + "\n";
  }
  return out + tag + "VERDICT: ship it";
}

}  // namespace handoff::test
