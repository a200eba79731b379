#include "protocol/json_fast_path.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "protocol/json_scan.hpp"
#include "utf8.hpp"

namespace handoff::rpc {
namespace {

using json = nlohmann::json;

// Nesting the recursion below may reach before it leaves a document to the slow path (which
// is iterative): bounds the stack whatever --max-depth says.
constexpr std::size_t max_recursion = 256;

// A string that grew past this while being decoded reserves room for the rest of the text at
// once (which bounds its decoded length) instead of doubling its way up: a 1 MiB finalText
// is then copied once, into memory touched once.
constexpr std::size_t reserve_rest_after_bytes = 64 * 1024;

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class parser {
 public:
  parser(std::string_view text, std::size_t max_depth)
      : p_(text.data()), end_(text.data() + text.size()), max_depth_(max_depth) {}

  std::optional<json> document() {
    json root;
    if (!value(root, 0)) return std::nullopt;
    skip_space();
    if (p_ != end_) return std::nullopt;
    return root;
  }

 private:
  void skip_space() noexcept {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  // `depth`: containers open around this value.
  bool value(json& out, std::size_t depth) {
    skip_space();
    if (p_ == end_) return false;
    switch (*p_) {
      case '{': return object(out, depth);
      case '[': return array(out, depth);
      case '"': {
        std::string s;
        if (!string(s)) return false;
        out = std::move(s);
        return true;
      }
      case 't': return literal("true", out, true);
      case 'f': return literal("false", out, false);
      case 'n': return literal("null", out, nullptr);
      default: return number(out);
    }
  }

  template <class V>
  bool literal(std::string_view word, json& out, V v) {
    if (static_cast<std::size_t>(end_ - p_) < word.size() || std::memcmp(p_, word.data(), word.size()) != 0)
      return false;
    p_ += word.size();
    out = v;
    return true;
  }

  bool object(json& out, std::size_t depth) {
    if (depth >= max_depth_ || depth >= max_recursion) return false;
    ++p_;
    out = json::object();
    auto& members = out.get_ref<json::object_t&>();
    skip_space();
    if (p_ != end_ && *p_ == '}') {
      ++p_;
      return true;
    }
    for (;;) {
      skip_space();
      if (p_ == end_ || *p_ != '"') return false;
      std::string key;
      if (!string(key)) return false;
      skip_space();
      if (p_ == end_ || *p_ != ':') return false;
      ++p_;
      json v;
      if (!value(v, depth + 1)) return false;
      members[std::move(key)] = std::move(v);  // a duplicate key: the last one wins
      skip_space();
      if (p_ == end_) return false;
      if (*p_ == '}') {
        ++p_;
        return true;
      }
      if (*p_ != ',') return false;
      ++p_;
    }
  }

  bool array(json& out, std::size_t depth) {
    if (depth >= max_depth_ || depth >= max_recursion) return false;
    ++p_;
    out = json::array();
    auto& items = out.get_ref<json::array_t&>();
    skip_space();
    if (p_ != end_ && *p_ == ']') {
      ++p_;
      return true;
    }
    for (;;) {
      json v;
      if (!value(v, depth + 1)) return false;
      items.push_back(std::move(v));
      skip_space();
      if (p_ == end_) return false;
      if (*p_ == ']') {
        ++p_;
        return true;
      }
      if (*p_ != ',') return false;
      ++p_;
    }
  }

  // At the opening quote. Plain runs, valid UTF-8 included, are copied with one append each;
  // escapes decoded; UTF-8 validated with the ranges of RFC 3629 (no overlongs, no surrogates,
  // nothing above U+10FFFF), as nlohmann does.
  bool string(std::string& out) {
    ++p_;
    const char* run = p_;
    for (;;) {
      p_ = reinterpret_cast<const char*>(skip_plain(reinterpret_cast<const unsigned char*>(p_),
                                                    reinterpret_cast<const unsigned char*>(end_)));
      if (p_ == end_) return false;
      const auto c = static_cast<unsigned char>(*p_);
      if (c >= 0x80) {
        const std::size_t n = utf8_sequence_length(reinterpret_cast<const unsigned char*>(p_),
                                                   reinterpret_cast<const unsigned char*>(end_));
        if (n == 0) return false;
        p_ += n;
        continue;
      }
      if (c < 0x20) return false;
      append_run(out, run);
      if (c == '"') {
        ++p_;
        return true;
      }
      if (!escape(out)) return false;
      run = p_;
    }
  }

  // Appends [run, p_) to `out`.
  void append_run(std::string& out, const char* run) {
    const auto n = static_cast<std::size_t>(p_ - run);
    if (out.size() + n > reserve_rest_after_bytes && out.capacity() < out.size() + n)
      out.reserve(out.size() + static_cast<std::size_t>(end_ - run));
    out.append(run, n);
  }

  bool escape(std::string& out) {
    if (end_ - p_ < 2) return false;
    const char e = p_[1];
    p_ += 2;
    switch (e) {
      case '"': out += '"'; return true;
      case '\\': out += '\\'; return true;
      case '/': out += '/'; return true;
      case 'b': out += '\b'; return true;
      case 'f': out += '\f'; return true;
      case 'n': out += '\n'; return true;
      case 'r': out += '\r'; return true;
      case 't': out += '\t'; return true;
      case 'u': break;
      default: return false;
    }
    int cp = hex4();
    if (cp < 0 || (cp >= 0xDC00 && cp <= 0xDFFF)) return false;  // a lone low surrogate
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;  // a lone high surrogate
      p_ += 2;
      const int low = hex4();
      if (low < 0xDC00 || low > 0xDFFF) return false;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(out, static_cast<std::uint32_t>(cp));
    return true;
  }

  // Four hex digits, or -1.
  int hex4() {
    if (end_ - p_ < 4) return -1;
    int v = 0;
    for (int i = 0; i < 4; ++i) {
      const int d = hex_value(p_[i]);
      if (d < 0) return -1;
      v = v * 16 + d;
    }
    p_ += 4;
    return v;
  }

  // -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?, converted as nlohmann converts it.
  bool number(json& out) {
    const char* begin = p_;
    const bool negative = *p_ == '-';
    if (negative) ++p_;
    if (p_ == end_) return false;
    if (*p_ == '0') {
      ++p_;
    } else if (*p_ >= '1' && *p_ <= '9') {
      while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    } else {
      return false;
    }
    bool integral = true;
    if (p_ != end_ && *p_ == '.') {
      integral = false;
      ++p_;
      if (!digits()) return false;
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      integral = false;
      ++p_;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!digits()) return false;
    }
    if (integral) {
      if (negative) {
        std::int64_t v = 0;
        const auto r = std::from_chars(begin, p_, v);
        if (r.ec == std::errc() && r.ptr == p_) {
          out = v;
          return true;
        }
      } else {
        std::uint64_t v = 0;
        const auto r = std::from_chars(begin, p_, v);
        if (r.ec == std::errc() && r.ptr == p_) {
          out = v;
          return true;
        }
      }
      // Out of 64-bit range: nlohmann makes it a double, as below.
    }
    double d = 0;
    const auto r = std::from_chars(begin, p_, d);
    // Overflow (an error there) and underflow (accepted there) are both left to nlohmann.
    if (r.ec != std::errc() || r.ptr != p_ || !std::isfinite(d)) return false;
    out = d;
    return true;
  }

  bool digits() {
    const char* start = p_;
    while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    return p_ != start;
  }

  const char* p_;
  const char* end_;
  std::size_t max_depth_;
};

}  // namespace

std::optional<nlohmann::json> parse_json_fast(std::string_view text, std::size_t max_depth) {
  return parser(text, max_depth).document();
}

}  // namespace handoff::rpc
