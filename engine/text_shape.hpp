// Size of a text the way Pi's `read` sees it: bytes, and lines = text.split("\n").length.
#pragma once

#include <cstddef>
#include <string_view>

namespace handoff {

struct text_shape {
  std::size_t bytes = 0;  // UTF-8 bytes
  std::size_t lines = 1;  // count of '\n' + 1; "" is one (empty) line, "a\n" is two
};

// Scans with memchr; linear, no allocation.
text_shape measure(std::string_view text) noexcept;

}  // namespace handoff
