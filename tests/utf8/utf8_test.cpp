// UTF-8 validation and cut positions (utf8/utf8.cpp), and the one sequence table the JSON fast
// paths use (utf8_sequence_length).
#include "utf8.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

using handoff::append_utf8;
using handoff::utf8_ceil;
using handoff::utf8_floor;
using handoff::utf8_sequence_length;
using handoff::valid_utf8;

namespace {

// "a", "é" (2 bytes), "中" (3 bytes), "😀" (4 bytes), "z": character starts at 0, 1, 3, 6, 10.
const std::string mixed = "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80z";
const std::vector<std::size_t> mixed_boundaries = {0, 1, 3, 6, 10, 11};

// The textbook encoding of code point `cp` in `bytes` UTF-8 bytes (1..4), whether or not that
// is its shortest form: the reference the table is checked against.
std::string encode(std::uint32_t cp, std::size_t bytes) {
  static constexpr unsigned char lead[] = {0x00, 0x00, 0xC0, 0xE0, 0xF0};
  std::string out(bytes, '\0');
  for (std::size_t i = bytes - 1; i > 0; --i) {
    out[i] = static_cast<char>(0x80 | (cp & 0x3F));
    cp >>= 6;
  }
  out[0] = static_cast<char>(lead[bytes] | cp);
  return out;
}

std::size_t sequence_length(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  return utf8_sequence_length(p, p + s.size());
}

bool is_boundary(std::size_t n) {
  for (const std::size_t b : mixed_boundaries) {
    if (b == n) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("valid_utf8 accepts well-formed text of every width") {
  CHECK(valid_utf8(""));
  CHECK(valid_utf8("plain ascii, long enough to take the eight-byte fast path twice"));
  CHECK(valid_utf8(mixed));
  CHECK(valid_utf8("\xC2\x80"));          // U+0080, smallest 2-byte
  CHECK(valid_utf8("\xDF\xBF"));          // U+07FF
  CHECK(valid_utf8("\xE0\xA0\x80"));      // U+0800, smallest 3-byte
  CHECK(valid_utf8("\xED\x9F\xBF"));      // U+D7FF, just below the surrogates
  CHECK(valid_utf8("\xEE\x80\x80"));      // U+E000, just above them
  CHECK(valid_utf8("\xEF\xBF\xBF"));      // U+FFFF
  CHECK(valid_utf8("\xF0\x90\x80\x80"));  // U+10000, smallest 4-byte
  CHECK(valid_utf8("\xF4\x8F\xBF\xBF"));  // U+10FFFF, the largest code point
  CHECK(valid_utf8(std::string_view("nul\0inside", 10)));
}

TEST_CASE("valid_utf8 rejects overlongs, surrogates, out-of-range and broken sequences") {
  CHECK_FALSE(valid_utf8("\xC0\x80"));          // overlong NUL
  CHECK_FALSE(valid_utf8("\xC1\xBF"));          // overlong 2-byte
  CHECK_FALSE(valid_utf8("\xE0\x9F\xBF"));      // overlong 3-byte
  CHECK_FALSE(valid_utf8("\xF0\x8F\xBF\xBF"));  // overlong 4-byte
  CHECK_FALSE(valid_utf8("\xED\xA0\x80"));      // U+D800
  CHECK_FALSE(valid_utf8("\xED\xBF\xBF"));      // U+DFFF
  CHECK_FALSE(valid_utf8("\xF4\x90\x80\x80"));  // U+110000
  CHECK_FALSE(valid_utf8("\xF5\x80\x80\x80"));
  CHECK_FALSE(valid_utf8("\xFF"));
  CHECK_FALSE(valid_utf8("\x80"));       // stray continuation
  CHECK_FALSE(valid_utf8("\xE4\xB8"));   // cut short at the end
  CHECK_FALSE(valid_utf8("\xE4\xB8z"));  // cut short before ASCII
  CHECK_FALSE(valid_utf8("\xF0\x9F\x98"));
  CHECK_FALSE(valid_utf8("\xC3\xA9\xA9"));  // one continuation too many
}

TEST_CASE("utf8_sequence_length accepts every scalar value in its shortest form, and nothing else") {
  for (std::uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    const std::size_t shortest = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    const bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
    for (std::size_t bytes = shortest < 2 ? 2 : shortest; bytes <= 4; ++bytes) {  // ASCII aside
      const std::string s = encode(cp, bytes);
      const std::size_t expected = bytes == shortest && !surrogate ? bytes : 0;
      if (sequence_length(s) != expected) {
        CAPTURE(cp);
        CAPTURE(bytes);
        FAIL_CHECK("utf8_sequence_length disagrees with the encoding");
      }
      if (expected != 0) {
        CHECK_EQ(sequence_length(s.substr(0, bytes - 1) + "x"), 0);  // cut short
      }
    }
  }
  for (std::uint32_t cp = 0x110000; cp < 0x200000; cp += 0x111) CHECK_EQ(sequence_length(encode(cp, 4)), 0);
  for (unsigned b = 0x80; b <= 0xFF; ++b) {
    const std::string lone(1, static_cast<char>(b));  // no continuation byte follows
    CHECK_EQ(sequence_length(lone), 0);
  }
}

TEST_CASE("append_utf8 writes every scalar value in its shortest form") {
  for (std::uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    const std::size_t shortest = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    std::string out = "x";
    append_utf8(out, cp);
    if (out != "x" + encode(cp, shortest)) {
      CAPTURE(cp);
      FAIL_CHECK("append_utf8 disagrees with the encoding");
    }
  }
  CHECK(valid_utf8(mixed));
  std::string built;
  for (const std::uint32_t cp : {0x61U, 0xE9U, 0x4E2DU, 0x1F600U, 0x7AU}) append_utf8(built, cp);
  CHECK_EQ(built, mixed);
}

TEST_CASE("valid_utf8 finds one bad byte at any position of a long ASCII run") {
  for (std::size_t at = 0; at < 40; ++at) {
    std::string text(40, 'x');
    text[at] = '\xBF';
    CAPTURE(at);
    CHECK_FALSE(valid_utf8(text));
    text[at] = 'y';
    CHECK(valid_utf8(text));
  }
}

TEST_CASE("utf8_floor and utf8_ceil land on the nearest character boundary") {
  for (std::size_t n = 0; n <= mixed.size(); ++n) {
    CAPTURE(n);
    const std::size_t floor = utf8_floor(mixed, n);
    const std::size_t ceil = utf8_ceil(mixed, n);
    CHECK(floor <= n);
    CHECK(ceil >= n);
    CHECK(is_boundary(floor));
    CHECK(is_boundary(ceil));
    for (std::size_t b = floor + 1; b <= n; ++b) CHECK_FALSE(is_boundary(b));
    for (std::size_t b = n; b < ceil; ++b) CHECK_FALSE(is_boundary(b));
    CHECK(valid_utf8(std::string_view(mixed).substr(0, floor)));
    CHECK(valid_utf8(std::string_view(mixed).substr(ceil)));
  }
}

TEST_CASE("utf8_floor and utf8_ceil clamp to the string") {
  CHECK(utf8_floor(mixed, 1000) == mixed.size());
  CHECK(utf8_ceil(mixed, 1000) == mixed.size());
  CHECK(utf8_floor("", 0) == 0);
  CHECK(utf8_ceil("", 5) == 0);
}

TEST_CASE("on invalid text the cut helpers stay within three bytes of the request") {
  const std::string run(10, '\x80');  // continuation bytes only: no character to protect
  for (std::size_t n = 0; n <= run.size(); ++n) {
    CAPTURE(n);
    CHECK(utf8_floor(run, n) <= n);
    CHECK(utf8_ceil(run, n) >= n);
    CHECK(n - utf8_floor(run, n) <= 3);
    CHECK(utf8_ceil(run, n) - n <= 3);
  }
}
