// The texts are built line by line from a fixed pseudo-random sequence (splitmix64, seeded per
// script), so they are reproducible on every machine without shipping 34 MiB of fixtures.
// The line mix matters more than the words: projection cost depends on how many lines the
// head and tail budgets cover and how long they are, so the mix follows what subagent
// reports look like (many short bullets and blank lines, some long paragraphs and code).
#include "projection_inputs.hpp"

#include <array>
#include <cstdint>

#include "utf8.hpp"

namespace handoff::bench {
namespace {

class random_source {
 public:
  explicit random_source(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform enough in [lo, hi] for choosing shapes; not for statistics.
  std::size_t between(std::size_t lo, std::size_t hi) noexcept {
    return lo + static_cast<std::size_t>(next() % (hi - lo + 1));
  }

 private:
  std::uint64_t state_;
};

constexpr std::array<std::string_view, 32> words = {
    "the",    "result",  "handoff", "daemon",  "projection", "budget", "line",    "tail",
    "head",   "parent",  "child",   "queue",   "artifact",   "fixed",  "changed", "test",
    "passes", "failing", "because", "when",    "returns",    "file",   "bytes",   "risk",
    "next",   "step",    "verdict", "socket",  "a",          "and",    "of",      "in"};

void append_words(std::string& out, random_source& rng, std::size_t length) {
  const std::size_t end = out.size() + length;
  while (out.size() < end) {
    out += words[rng.between(0, words.size() - 1)];
    out += rng.between(0, 11) == 0 ? ", " : " ";
  }
  out.resize(end);
}

// One ideograph from the CJK Unified Ideographs block (U+4E00..U+9FFF), or now and then a
// CJK comma or full stop; every one of them is 3 bytes of UTF-8.
void append_cjk_char(std::string& out, random_source& rng) {
  const std::size_t roll = rng.between(0, 15);
  const std::uint32_t cp = roll == 0   ? 0xFF0C  // FULLWIDTH COMMA
                           : roll == 1 ? 0x3002  // IDEOGRAPHIC FULL STOP
                                       : static_cast<std::uint32_t>(0x4E00 + rng.between(0, 0x51FF));
  out += static_cast<char>(0xE0 | (cp >> 12));
  out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  out += static_cast<char>(0x80 | (cp & 0x3F));
}

// Body text of about `length` bytes in the script (CJK rounds to whole characters).
void append_body(std::string& out, script s, random_source& rng, std::size_t length) {
  if (s == script::ascii) {
    append_words(out, rng, length);
    return;
  }
  for (std::size_t i = 0; i < (length + 2) / 3; ++i) append_cjk_char(out, rng);
}

// One line, without its '\n'. Shares, roughly: 12% blank, 5% heading, 30% bullet, 30%
// paragraph, 15% code, 8% table row.
void append_line(std::string& out, script s, random_source& rng) {
  const std::size_t kind = rng.between(0, 99);
  if (kind < 12) return;
  if (kind < 17) {
    out += rng.between(0, 2) == 0 ? "# " : "## ";
    append_body(out, s, rng, rng.between(8, 40));
  } else if (kind < 47) {
    out += rng.between(0, 3) == 0 ? "  - " : "- ";
    append_body(out, s, rng, rng.between(15, 100));
  } else if (kind < 77) {
    append_body(out, s, rng, rng.between(40, 200));
  } else if (kind < 92) {
    // Code stays ASCII in both scripts, as it does in real reports.
    out += "    ";
    append_words(out, rng, rng.between(10, 70));
    out += rng.between(0, 1) == 0 ? ");" : " {";
  } else {
    for (int cell = 0; cell < 3; ++cell) {
      out += "| ";
      append_body(out, s, rng, rng.between(4, 20));
      out += ' ';
    }
    out += '|';
  }
}

std::string size_label(std::size_t bytes) {
  if (bytes % (1024 * 1024) == 0) return std::to_string(bytes / (1024 * 1024)) + "MiB";
  return std::to_string(bytes / 1024) + "KiB";
}

}  // namespace

std::string_view to_string(script s) noexcept { return s == script::ascii ? "ascii" : "cjk"; }

std::string generate_text(script s, std::size_t bytes) {
  random_source rng(s == script::ascii ? 0x68616e646f6666ULL : 0x636a6b2d74657874ULL);
  std::string out;
  out.reserve(bytes + 256);
  while (out.size() < bytes) {
    append_line(out, s, rng);
    out += '\n';
  }
  // Cut to the size on a character boundary, then fill the last 0-2 bytes with ASCII so every
  // input has the exact size its label says.
  out.resize(utf8_floor(out, bytes));
  out.append(bytes - out.size(), '.');
  return out;
}

std::vector<input_case> all_cases() {
  constexpr std::array<std::size_t, 4> sizes = {4 * 1024, 37 * 1024, 1024 * 1024,
                                                16 * 1024 * 1024};
  std::vector<input_case> cases;
  for (const script s : {script::ascii, script::cjk}) {
    for (const std::size_t bytes : sizes) {
      const std::string label = size_label(bytes);
      cases.push_back({std::string(to_string(s)) + "/" + label,
                       std::string(to_string(s)) + "-" + label + ".txt", s, bytes,
                       generate_text(s, bytes)});
    }
  }
  return cases;
}

}  // namespace handoff::bench
