// The inner loop of both JSON fast paths (json_fast_path.cpp parses, json_dump.cpp writes):
// finding, inside a string, the next byte that is not copied as is. A finalText is megabytes of
// mostly plain ASCII broken every few dozen bytes by a '\n' or a '"': the scan looks at 16 bytes
// at a time (SSE2, part of every x86-64) or 8 (portable SWAR elsewhere) and lands on the exact
// byte, so the caller copies each run with one append and never walks a run byte by byte.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace handoff::rpc {

// A byte a JSON string cannot hold as is, or that needs a look: '"', '\\', a control byte
// (< 0x20) or a non-ASCII byte (the start or middle of a UTF-8 sequence, checked by the caller).
constexpr bool is_string_special(unsigned char c) noexcept { return c < 0x20 || c >= 0x80 || c == '"' || c == '\\'; }

// The first special byte in [p, end), or `end` when there is none.
inline const unsigned char* skip_plain(const unsigned char* p, const unsigned char* end) noexcept {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x20);
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // Signed compare: bytes >= 0x80 are negative, so "< 0x20" catches controls and non-ASCII.
    const __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                                         _mm_cmplt_epi8(v, space));
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(special));
    if (mask != 0) return p + std::countr_zero(mask);
    p += 16;
  }
#else
  if constexpr (std::endian::native == std::endian::little) {
    constexpr std::uint64_t ones = 0x0101010101010101ULL;
    constexpr std::uint64_t highs = 0x8080808080808080ULL;
    while (end - p >= 8) {
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      const std::uint64_t quote = w ^ (ones * '"');
      const std::uint64_t backslash = w ^ (ones * '\\');
      // Each term flags its bytes exactly up to the first hit (a borrow only runs upward), and
      // the lowest flagged byte is all the caller needs.
      const std::uint64_t special = (((quote - ones) & ~quote) | ((backslash - ones) & ~backslash) |
                                     ((w - ones * 0x20) & ~w) | w) &
                                    highs;
      if (special != 0) return p + std::countr_zero(special) / 8;
      p += 8;
    }
  }
#endif
  while (p != end && !is_string_special(*p)) ++p;
  return p;
}

}  // namespace handoff::rpc
