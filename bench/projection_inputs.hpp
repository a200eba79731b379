// Deterministic texts shaped like subagent reports, for the projection benchmark and its Node
// peer (bench/pi_truncate.mjs reads the same bytes from files the benchmark dumps, so both
// sides measure byte-identical inputs).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace handoff::bench {

enum class script {
  ascii,  // English markdown: headings, bullets, paragraphs, code, tables, blank lines
  cjk,    // the same shapes written in 3-byte UTF-8 ideographs and CJK punctuation
};

std::string_view to_string(script s) noexcept;

// A markdown-like text of exactly `bytes` bytes, valid UTF-8, lines of varied length
// (0 to ~200 bytes). The same (s, bytes) always gives the same text.
std::string generate_text(script s, std::size_t bytes);

struct input_case {
  std::string name;    // "ascii/1MiB": the benchmark's and the table's key
  std::string file;    // "ascii-1MiB.txt": the dumped input's file name
  script text_script;
  std::size_t bytes;
  std::string text;
};

// Every size the issue asks for (4 KiB, 37 KiB, 1 MiB, 16 MiB), ASCII and CJK.
std::vector<input_case> all_cases();

}  // namespace handoff::bench
