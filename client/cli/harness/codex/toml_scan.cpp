#include "cli/harness/codex/toml_scan.hpp"

#include <cctype>
#include <cstdint>
#include <stdexcept>
#include <utility>

#include "utf8.hpp"

namespace handoff::cli::codex {
namespace {

// One pass over the text, by character, tracking the line and where it starts.
class toml_statement_scanner {
 public:
  toml_statement_scanner(std::string_view text, const std::string& where) : s_(text), where_(where) {
    if (s_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = line_start_ = 3;  // a byte order mark
  }

  std::vector<toml_statement> scan() {
    std::vector<toml_statement> out;
    toml_key table;  // the current table's key
    for (;;) {
      skip_space_and_comments();
      if (at_end()) return out;
      toml_statement st;
      st.line = line_;
      st.begin = line_start_;
      if (peek() == '[') {
        advance();
        st.type = toml_statement::kind::table;
        if (peek() == '[') {
          advance();
          st.type = toml_statement::kind::array_table;
        }
        st.path = read_key();
        skip_blank();
        expect(']');
        if (st.type == toml_statement::kind::array_table) expect(']');
        table = st.path;
      } else {
        st.path = table;
        toml_key written = read_key();
        st.written = written.size();
        for (std::string& segment : written) st.path.push_back(std::move(segment));
        skip_blank();
        expect('=');
        skip_blank();
        skip_value();
      }
      end_of_line();
      st.end = pos_;
      out.push_back(std::move(st));
    }
  }

 private:
  std::string_view s_;
  const std::string& where_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;
  std::size_t line_start_ = 0;

  [[noreturn]] void fail(std::string_view what) const {
    throw std::runtime_error(where_ + ":" + std::to_string(line_) + ": handoff cannot read this TOML (" + std::string(what) +
                             "); nothing was changed");
  }
  bool at_end() const { return pos_ >= s_.size(); }
  char peek(std::size_t ahead = 0) const { return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0'; }
  bool looking_at(std::string_view what) const { return s_.substr(pos_, what.size()) == what; }
  void advance() {
    if (s_[pos_++] == '\n') {
      ++line_;
      line_start_ = pos_;
    }
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    advance();
  }
  void skip_blank() {
    while (peek() == ' ' || peek() == '\t') advance();
  }
  void skip_comment() {
    while (!at_end() && peek() != '\n') advance();
  }
  // Blanks, newlines and comments: between statements, and between an array's values.
  void skip_space_and_comments() {
    for (;;) {
      const char c = peek();
      if (c == ' ' || c == '\t' || c == '\n' || (c == '\r' && peek(1) == '\n')) {
        advance();
      } else if (c == '#') {
        skip_comment();
      } else {
        return;
      }
    }
  }
  // After a statement: blanks, a comment, then the newline (or the end of the text).
  void end_of_line() {
    skip_blank();
    if (peek() == '#') skip_comment();
    if (at_end()) return;
    if (peek() == '\r') advance();
    if (peek() != '\n') fail("something after a value or header on its line");
    advance();
  }

  toml_key read_key() {
    toml_key key;
    for (;;) {
      skip_blank();
      key.push_back(read_key_segment());
      skip_blank();
      if (peek() != '.') return key;
      advance();
    }
  }
  std::string read_key_segment() {
    std::string out;
    if (peek() == '"') {
      advance();
      while (peek() != '"') {
        if (at_end() || peek() == '\n') fail("an unterminated quoted key");
        if (peek() == '\\') {
          read_escape(out);
        } else {
          out += peek();
          advance();
        }
      }
      advance();
    } else if (peek() == '\'') {
      advance();
      while (peek() != '\'') {
        if (at_end() || peek() == '\n') fail("an unterminated quoted key");
        out += peek();
        advance();
      }
      advance();
    } else {
      // Non-ASCII letters too (TOML 1.1; toml++ checked which).
      while (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_' || peek() == '-' ||
             static_cast<unsigned char>(peek()) >= 0x80) {
        out += peek();
        advance();
      }
      if (out.empty()) fail("a key was expected");
    }
    return out;
  }
  // A backslash escape of a basic string, decoded onto `out`.
  void read_escape(std::string& out) {
    advance();  // the backslash
    const char c = peek();
    if (at_end()) fail("a backslash at the end");
    advance();
    switch (c) {
      case 'b': out += '\b'; return;
      case 't': out += '\t'; return;
      case 'n': out += '\n'; return;
      case 'f': out += '\f'; return;
      case 'r': out += '\r'; return;
      case '"': out += '"'; return;
      case '\\': out += '\\'; return;
      case 'e': out += '\x1B'; return;  // \e and \xHH: TOML 1.1
      case 'x':
      case 'u':
      case 'U': {
        const std::size_t digits = c == 'x' ? 2 : c == 'u' ? 4 : 8;
        std::uint32_t cp = 0;
        for (std::size_t i = 0; i < digits; ++i) {
          const char h = peek();
          if (!std::isxdigit(static_cast<unsigned char>(h))) fail("a malformed \\x, \\u or \\U escape");
          cp = cp * 16 + static_cast<std::uint32_t>(std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (h | 0x20) - 'a' + 10);
          advance();
        }
        append_utf8(out, cp);
        return;
      }
      default: fail("an unknown escape");
    }
  }

  void skip_value() {
    const char c = peek();
    if (looking_at("\"\"\"")) {
      skip_multi_line_string('"');
    } else if (looking_at("'''")) {
      skip_multi_line_string('\'');
    } else if (c == '"' || c == '\'') {
      advance();
      while (peek() != c) {
        if (at_end() || peek() == '\n') fail("an unterminated string");
        if (c == '"' && peek() == '\\') advance();
        advance();
      }
      advance();
    } else if (c == '[') {
      advance();
      for (;;) {
        skip_space_and_comments();
        if (peek() == ']') break;
        skip_value();
        skip_space_and_comments();
        if (peek() == ',') {
          advance();
        } else if (peek() != ']') {
          fail("expected ',' or ']' in an array");
        }
      }
      advance();
    } else if (c == '{') {  // newlines, comments and a trailing comma in it: TOML 1.1, as Codex reads
      advance();
      skip_space_and_comments();
      while (peek() != '}') {
        read_key();
        skip_blank();
        expect('=');
        skip_blank();
        skip_value();
        skip_space_and_comments();
        if (peek() == ',') {
          advance();
          skip_space_and_comments();
        } else if (peek() != '}') {
          fail("expected ',' or '}' in an inline table");
        }
      }
      advance();
    } else {
      skip_scalar();
    }
  }
  // """...""" or '''...''': to the closing quotes, and up to two more quotes, which belong to the
  // string. Backslashes escape in the basic one only.
  void skip_multi_line_string(char quote) {
    const std::string closing(3, quote);
    for (int i = 0; i < 3; ++i) advance();
    for (;;) {
      if (at_end()) fail("an unterminated multi-line string");
      if (quote == '"' && peek() == '\\') {
        advance();
        if (!at_end()) advance();
      } else if (looking_at(closing)) {
        for (int i = 0; i < 3; ++i) advance();
        for (int extra = 0; extra < 2 && peek() == quote; ++extra) advance();
        return;
      } else {
        advance();
      }
    }
  }
  // A number, a boolean, a date or a time: up to the next delimiter. A date followed by a space
  // and a time is one value (1979-05-27 07:32:00Z).
  void skip_scalar() {
    const std::size_t start = pos_;
    const auto token = [&] {
      while (!at_end() && std::string_view(" \t\r\n,]}#").find(peek()) == std::string_view::npos) advance();
    };
    token();
    if (pos_ == start) fail("a value was expected");
    const std::string_view value = s_.substr(start, pos_ - start);
    const bool date = value.size() == 10 && value[4] == '-' && value[7] == '-';
    if (date && peek() == ' ' && std::isdigit(static_cast<unsigned char>(peek(1)))) {
      advance();
      token();
    }
  }
};

}  // namespace

std::vector<toml_statement> toml_statements(std::string_view text, const std::string& where) {
  return toml_statement_scanner(text, where).scan();
}

}  // namespace handoff::cli::codex
