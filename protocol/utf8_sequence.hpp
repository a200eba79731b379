// One well-formed UTF-8 sequence (RFC 3629: no overlongs, no surrogates, nothing past U+10FFFF),
// the check both fast JSON paths make on each non-ASCII character (json_fast_path, json_dump).
#pragma once

#include <cstddef>

namespace handoff::rpc {

// Length (2..4) of the well-formed UTF-8 sequence starting at `p`, or 0 when there is none
// before `end`. `p < end`, and *p is not ASCII.
inline std::size_t utf8_sequence_length(const unsigned char* p, const unsigned char* end) noexcept {
  const unsigned char b0 = p[0];
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;  // no overlong 3-byte forms
    if (b0 == 0xED) hi = 0x9F;  // no UTF-16 surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;  // no overlong 4-byte forms
    if (b0 == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (static_cast<std::size_t>(end - p) < n || p[1] < lo || p[1] > hi) return 0;
  for (std::size_t i = 2; i < n; ++i)
    if (p[i] < 0x80 || p[i] > 0xBF) return 0;
  return n;
}

}  // namespace handoff::rpc
