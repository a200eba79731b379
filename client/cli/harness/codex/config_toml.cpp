#include "cli/harness/codex/config_toml.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <utility>

namespace handoff::cli::codex {
namespace {

// One statement of a TOML file: a header, or a key and its value, and the lines it takes.
struct toml_statement {
  enum class kind { table, array_table, key_value };
  kind type = kind::key_value;
  toml_key path;          // the header's key; for a key, the table's key then the (dotted) key
  std::size_t line = 0;   // the line it starts on, from 1
  std::size_t begin = 0;  // offset of that line's start
  std::size_t end = 0;    // offset just past the newline of its last line (or the end of the text)
  std::size_t written = 0;  // a key's segments as written (2 for `a.b = 1`)
};

bool toml_key_starts_with(const toml_key& key, const toml_key& prefix) {
  return key.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), key.begin());
}

bool toml_blank_line(std::string_view line) { return line.find_first_not_of(" \t\r\n") == std::string_view::npos; }

void toml_append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Splits a TOML text (one toml++ accepted) into its statements: where each header and each key
// starts and ends, skipping comments and strings, so that a `[x]` inside a multi-line string or
// an array is no header. What it does not recognise throws, naming the line.
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
        toml_append_utf8(out, cp);
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

// "\r\n" when the text's lines end so (its first line decides), else "\n".
std::string toml_newline(const std::string& text) {
  const std::size_t first = text.find('\n');
  return first != std::string::npos && first > 0 && text[first - 1] == '\r' ? "\r\n" : "\n";
}

}  // namespace

toml_config::toml_config(std::string text, std::string where, toml_key key)
    : text_(std::move(text)), where_(std::move(where)), key_(std::move(key)) {
  try {
    root_ = toml::parse(text_, where_);
  } catch (const toml::parse_error& e) {
    throw std::runtime_error(where_ + ":" + std::to_string(e.source().begin.line) + ": not valid TOML (" +
                             std::string(e.description()) + "); fix it first (nothing was changed)");
  }
  newline_ = toml_newline(text_);

  const std::string name = toml_key_text(key_);
  const auto refuse = [&](std::size_t line, const std::string& how) {
    throw std::runtime_error(where_ + ":" + std::to_string(line) + ": " + name + " is " + how + "; handoff edits only a [" + name +
                             "] table of its own: make it one or take it out (nothing was changed)");
  };
  bool owned = false;       // the current table is the key's or one of its sub-tables
  bool last_owned = false;  // the statement before was one of the key's table
  for (const toml_statement& st : toml_statement_scanner(text_, where_).scan()) {
    if (st.type != toml_statement::kind::key_value) {
      owned = toml_key_starts_with(st.path, key_);
      if (owned && st.type == toml_statement::kind::array_table && st.path.size() == key_.size())
        refuse(st.line, "an array of tables ([[" + name + "]])");
    } else if (!owned && toml_key_starts_with(st.path, key_)) {
      refuse(st.line, std::string(st.written > 1 ? "set by a dotted key" : "set by a key") + " (" + toml_key_text(st.path) +
                          " = ...)");
    }
    if (owned) {
      if (last_owned) {
        spans_.back().end = st.end;
      } else {
        spans_.push_back({st.begin, st.end});
      }
    }
    last_owned = owned;
  }
  // Defined, yet by no header of its own: inside an inline table.
  const toml::node* node = &root_;
  for (const std::string& segment : key_) {
    const toml::table* table = node->as_table();
    node = table != nullptr ? table->get(segment) : nullptr;
    if (node == nullptr) break;
  }
  if (node != nullptr && spans_.empty()) refuse(node->source().begin.line, "defined inside an inline table");
}

namespace {

// `text` without [begin, end), and without the blank line before it when it stood at the end or
// between two blank lines.
std::string toml_cut(std::string text, std::size_t begin, std::size_t end) {
  struct {
    std::size_t begin, end;
  } s{begin, end};
  text.erase(s.begin, s.end - s.begin);
  if (s.begin == 0 || text[s.begin - 1] != '\n') return text;
  const std::size_t before = s.begin >= 2 ? text.rfind('\n', s.begin - 2) : std::string::npos;
  std::size_t previous = before == std::string::npos ? 0 : before + 1;
  if (previous == 0 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) previous = 3;
  if (!toml_blank_line(std::string_view(text).substr(previous, s.begin - previous))) return text;
  const std::size_t next_end = text.find('\n', s.begin);
  const std::string_view next =
      std::string_view(text).substr(s.begin, next_end == std::string::npos ? std::string::npos : next_end + 1 - s.begin);
  if (s.begin == text.size() || toml_blank_line(next)) text.erase(previous, s.begin - previous);
  return text;
}

// The line [begin, end) of `text` without its line end.
std::string_view toml_line(std::string_view text, std::size_t begin, std::size_t end) {
  std::string_view line = text.substr(begin, end - begin);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  return line;
}

bool toml_marked(std::string_view text, const toml_statement& st) {
  return toml_line(text, st.begin, st.end).ends_with(std::string("  ") + std::string(toml_mark));
}

}  // namespace

std::string toml_config::cut(std::string text, const span& s) const { return toml_cut(std::move(text), s.begin, s.end); }

std::string toml_with_marked(const std::string& text, const std::string& where, const toml_marked_key& line,
                             std::string* users) {
  toml::table root;
  try {
    root = toml::parse(text, where);
  } catch (const toml::parse_error& e) {
    throw std::runtime_error(where + ":" + std::to_string(e.source().begin.line) + ": not valid TOML (" +
                             std::string(e.description()) + "); fix it first (nothing was changed)");
  }
  const std::string name = toml_key_text(line.table);
  const std::string nl = toml_newline(text);
  const std::string key_line = line.key + " = " + line.value + "  " + std::string(toml_mark) + nl;
  const std::vector<toml_statement> statements = toml_statement_scanner(text, where).scan();
  // Each parent and the table itself: a table a header can extend, or absent.
  const toml::node* node = &root;
  for (std::size_t i = 0; i < line.table.size() && node != nullptr; ++i) {
    node = node->as_table()->get(line.table[i]);
    if (node == nullptr) break;
    const std::string at = where + ":" + std::to_string(node->source().begin.line) + ": ";
    const std::string part = toml_key_text({line.table.begin(), line.table.begin() + std::ptrdiff_t(i + 1)});
    if (!node->is_table())
      throw std::runtime_error(at + part + " is not a table; handoff cannot set " + name + "." + line.key +
                               " (keep Codex's own subagent tools with --keep-native-agents; nothing was changed)");
    if (node->as_table()->is_inline())
      throw std::runtime_error(at + part + " is an inline table; handoff cannot set " + name + "." + line.key + " in it" +
                               ": write it as a [" + part + "] table, or keep Codex's own subagent tools with "
                               "--keep-native-agents (nothing was changed)");
  }
  toml_key full = line.table;
  full.push_back(line.key);
  const std::string nothing = ": write it as a [" + name + "] table, or keep Codex's own subagent tools with "
                              "--keep-native-agents (nothing was changed)";
  for (const toml_statement& st : statements) {
    if (st.type != toml_statement::kind::key_value || st.written < 2) continue;
    // `a.b.c = 1` under [t] defines the tables t.a and t.a.b: no header may extend them.
    std::size_t common = 0;
    while (common < line.table.size() && common + 1 < st.path.size() && line.table[common] == st.path[common]) ++common;
    if (common > st.path.size() - st.written)
      throw std::runtime_error(where + ":" + std::to_string(st.line) + ": " +
                               toml_key_text({line.table.begin(), line.table.begin() + std::ptrdiff_t(common)}) +
                               " is defined by a dotted key (" + toml_key_text(st.path) + " = ...); handoff cannot set " +
                               name + "." + line.key + nothing);
  }
  if (node != nullptr) {
    if (const toml::node* value = node->as_table()->get(line.key)) {
      const auto mine = std::find_if(statements.begin(), statements.end(), [&](const toml_statement& st) {
        return st.type == toml_statement::kind::key_value && st.path == full && toml_marked(text, st);
      });
      if (mine == statements.end() && users != nullptr) {
        const std::size_t from = std::string::size_type(value->source().begin.line);
        for (const toml_statement& st : statements)
          if (st.line == from && st.path == full) {
            const std::string_view l = toml_line(text, st.begin, st.end);
            const std::size_t eq = l.find('=');
            std::string v(l.substr(eq == std::string_view::npos ? 0 : eq + 1));
            if (const std::size_t hash = v.find(" #"); hash != std::string::npos) v.resize(hash);
            while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.erase(0, 1);
            while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.pop_back();
            *users = v;
          }
      }
      return text;
    }
    for (const toml_statement& st : statements)
      if (st.type == toml_statement::kind::table && st.path == line.table) {
        std::string out = text;
        std::string insert = key_line;
        if (st.end == out.size() && (out.empty() || out.back() != '\n')) insert = nl + insert;
        return out.insert(st.end, insert);
      }
    // Defined by its sub-tables' headers alone: a header of its own may follow them.
  }
  std::string out = text;
  if (!out.empty()) {
    if (out.back() != '\n') out += nl;
    out += nl;
  }
  return out + "[" + name + "]  " + std::string(toml_mark) + nl + key_line;
}

std::string toml_without_marked(const std::string& text, const std::string& where) {
  const std::vector<toml_statement> statements = toml_statement_scanner(text, where).scan();
  const auto is_key = [&](std::size_t i) { return statements[i].type == toml_statement::kind::key_value; };
  // Each statement's header: the index of the header it stands under (npos: none).
  std::vector<std::size_t> header(statements.size(), std::string::npos);
  for (std::size_t i = 0, current = std::string::npos; i < statements.size(); ++i) {
    if (!is_key(i)) current = i;
    header[i] = is_key(i) ? current : i;
  }
  std::vector<bool> cut(statements.size(), false);
  for (std::size_t i = 0; i < statements.size(); ++i) cut[i] = is_key(i) && toml_marked(text, statements[i]);
  for (std::size_t i = 0; i < statements.size(); ++i) {
    if (is_key(i) || statements[i].type != toml_statement::kind::table || !toml_marked(text, statements[i])) continue;
    bool empty = true;  // every key under the header is one of handoff's
    for (std::size_t j = i + 1; j < statements.size() && is_key(j); ++j) empty = empty && cut[j];
    cut[i] = empty;
  }
  std::string out = text;
  for (std::size_t i = statements.size(); i-- > 0;) {
    if (!cut[i]) continue;
    if (is_key(i)) {
      if (header[i] != std::string::npos && cut[header[i]]) continue;  // taken out with its header
      out.erase(statements[i].begin, statements[i].end - statements[i].begin);
      continue;
    }
    // A marked header goes with its keys as one block, as an appended table is taken out.
    std::size_t end = statements[i].end;
    for (std::size_t j = i + 1; j < statements.size() && is_key(j); ++j) end = statements[j].end;
    out = toml_cut(std::move(out), statements[i].begin, end);
  }
  return out;
}

std::string toml_config::with_table(std::string_view table) const {
  std::string body;
  for (const char c : table) {
    if (c == '\n') {
      body += newline_;
    } else {
      body += c;
    }
  }
  std::string out = text_;
  if (!spans_.empty()) {
    for (std::size_t i = spans_.size(); i-- > 1;) out = cut(std::move(out), spans_[i]);
    out.replace(spans_[0].begin, spans_[0].end - spans_[0].begin, body);
    return out;
  }
  // Appended as a header: each parent present must be a table a header can extend.
  const toml::node* node = &root_;
  for (std::size_t i = 0; i + 1 < key_.size(); ++i) {
    node = node->as_table()->get(key_[i]);
    if (node == nullptr) break;
    const std::string parent = toml_key_text({key_.begin(), key_.begin() + std::ptrdiff_t(i + 1)});
    const std::string line = std::to_string(node->source().begin.line);
    if (!node->is_table())
      throw std::runtime_error(where_ + ":" + line + ": " + parent + " is not a table; handoff cannot add [" + toml_key_text(key_) +
                               "] to it (nothing was changed)");
    if (node->as_table()->is_inline())
      throw std::runtime_error(where_ + ":" + line + ": " + parent + " is an inline table; handoff cannot add [" + toml_key_text(key_) +
                               "] beside it: write it as a [" + parent + "] table (nothing was changed)");
  }
  if (!out.empty()) {
    if (out.back() != '\n') out += newline_;
    out += newline_;
  }
  return out + body;
}

std::string toml_config::without_table() const {
  std::string out = text_;
  for (std::size_t i = spans_.size(); i-- > 0;) out = cut(std::move(out), spans_[i]);
  return out;
}

std::string toml_key_text(const toml_key& key) {
  std::string out;
  for (const std::string& segment : key) {
    if (!out.empty()) out += '.';
    out += segment;
  }
  return out;
}

std::string toml_quoted(std::string_view value) {
  std::string out = "\"";
  for (const char c : value) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04X", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace handoff::cli::codex
