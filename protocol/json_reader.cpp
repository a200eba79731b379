#include "protocol/json_reader.hpp"

#include <cstring>
#include <limits>

#include "protocol/json_scan.hpp"
#include "utf8.hpp"

namespace handoff::rpc {

bool json_reader::take_exact(std::string_view bytes) noexcept {
  if (static_cast<std::size_t>(end_ - p_) < bytes.size() || std::memcmp(p_, bytes.data(), bytes.size()) != 0)
    return false;
  p_ += bytes.size();
  return true;
}

bool json_reader::take_word(std::string_view word) noexcept {
  skip_space();
  return take_exact(word);
}

bool json_reader::string(std::string_view& out) noexcept {
  if (!take('"')) return false;
  const auto* begin = reinterpret_cast<const unsigned char*>(p_);
  const auto* end = reinterpret_cast<const unsigned char*>(end_);
  const auto* p = begin;
  for (;;) {
    p = skip_plain(p, end);
    if (p == end) return false;
    if (*p == '"') break;
    if (*p < 0x80) return false;  // an escape (the slow path decodes it) or a control byte
    const std::size_t n = utf8_sequence_length(p, end);
    if (n == 0) return false;
    p += n;
  }
  out = std::string_view(p_, static_cast<std::size_t>(p - begin));
  p_ = reinterpret_cast<const char*>(p + 1);
  return true;
}

bool json_reader::integer(std::int64_t& out) noexcept {
  skip_space();
  const bool negative = p_ != end_ && *p_ == '-';
  if (negative) ++p_;
  if (p_ == end_ || *p_ < '0' || *p_ > '9') return false;
  if (*p_ == '0' && end_ - p_ > 1 && p_[1] >= '0' && p_[1] <= '9') return false;  // a leading zero
  std::uint64_t magnitude = 0;
  constexpr std::uint64_t limit = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1;
  for (; p_ != end_ && *p_ >= '0' && *p_ <= '9'; ++p_) {
    const auto digit = static_cast<std::uint64_t>(*p_ - '0');
    if (magnitude > (limit - digit) / 10) return false;  // past 2^63: the slow path's business
    magnitude = magnitude * 10 + digit;
  }
  if (p_ != end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;  // not an integer
  if (!negative && magnitude == limit) return false;                         // 2^63: unsigned in nlohmann
  out = negative ? static_cast<std::int64_t>(0 - magnitude) : static_cast<std::int64_t>(magnitude);
  return true;
}

bool json_reader::boolean(bool& out) noexcept {
  if (take_word("true")) {
    out = true;
    return true;
  }
  if (take_word("false")) {
    out = false;
    return true;
  }
  return false;
}

}  // namespace handoff::rpc
