// UTF-8 helpers used wherever text is cut: a cut never lands inside a sequence.
#pragma once

#include <cstddef>
#include <string_view>

namespace handoff {

// True when `s` is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
bool valid_utf8(std::string_view s) noexcept;

// Largest cut position <= n (and <= s.size()) that is not inside a UTF-8 sequence:
// s.substr(0, result) ends on a whole character.
std::size_t utf8_floor(std::string_view s, std::size_t n) noexcept;

// Smallest cut position >= n (and <= s.size()) that is not inside a UTF-8 sequence:
// s.substr(result) starts on a whole character.
std::size_t utf8_ceil(std::string_view s, std::size_t n) noexcept;

}  // namespace handoff
