// Size of a text the way Pi's `read` sees it: bytes, and lines = text.split("\n").length.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace handoff {

struct text_shape {
  std::size_t bytes = 0;  // UTF-8 bytes
  std::size_t lines = 1;  // count of '\n' + 1; "" is one (empty) line, "a\n" is two
};

// Scans with memchr; linear, no allocation.
text_shape measure(std::string_view text) noexcept;

// `known` when it can be the shape of `text` (its byte count, and 1 to bytes + 1 lines), else
// measure(text). For a shape recorded earlier (the queue's): the lines are taken on trust, which
// saves the scan; only a shape that cannot be this text's is measured again.
text_shape measure(std::string_view text, std::optional<text_shape> known) noexcept;

}  // namespace handoff
