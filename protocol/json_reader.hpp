// A strict pull reader of JSON text for the typed fast path (wire::read_text_object,
// rpc::read_response): a described struct is read straight from the bytes, with no json built on
// the way (the DOM of a 434-byte daemon/status reply cost the client 24,800 instructions to build
// and 8,700 to free).
//
// Like json_fast_path.hpp it only ever accepts. Each call consumes one token and returns false
// on anything it does not take as is: invalid JSON, and also valid forms it leaves to the slow
// path (a string with an escape, a number with a fraction or an exponent, an integer out of
// 64-bit range). After a false the reader's position means nothing: the caller gives up and
// parses the whole text the ordinary way (parse_message, field_reader), which accepts it or says
// exactly what is wrong.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace handoff::rpc {

class json_reader {
 public:
  explicit json_reader(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  // The next byte after whitespace, or '\0' at the end; consumes nothing else.
  char peek() noexcept {
    skip_space();
    return p_ != end_ ? *p_ : '\0';
  }
  // Consumes `c` (after whitespace) when it is next.
  bool take(char c) noexcept {
    if (peek() != c) return false;
    ++p_;
    return true;
  }
  // Consumes exactly these bytes when they come next (no whitespace skipped inside).
  bool take_exact(std::string_view bytes) noexcept;
  // A string without escapes, valid UTF-8; the view points into the text.
  bool string(std::string_view& out) noexcept;
  bool string(std::string& out) {
    std::string_view s;
    if (!string(s)) return false;
    out.assign(s);
    return true;
  }
  // An integer without fraction or exponent that fits in int64_t (as nlohmann: a negative one
  // is signed; a non-negative one up to 2^63-1 here, the range every wire integer has).
  bool integer(std::int64_t& out) noexcept;
  bool boolean(bool& out) noexcept;
  bool null() noexcept { return take_word("null"); }
  // Only whitespace is left.
  bool at_end() noexcept { return peek() == '\0' && p_ == end_; }
  // The text not read yet.
  std::string_view rest() const noexcept { return {p_, static_cast<std::size_t>(end_ - p_)}; }

 private:
  void skip_space() noexcept {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool take_word(std::string_view word) noexcept;

  const char* p_;
  const char* end_;
};

}  // namespace handoff::rpc
