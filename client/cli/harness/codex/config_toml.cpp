#include "cli/harness/codex/config_toml.hpp"

#include <cstddef>
#include <stdexcept>
#include <utility>

#include "cli/harness/codex/toml_scan.hpp"

namespace handoff::cli::codex {

toml_config::toml_config(std::string text, std::string where, toml_key key)
    : text_(std::move(text)), where_(std::move(where)), key_(std::move(key)) {
  root_ = toml_parse_checked(text_, where_);
  newline_ = toml_newline(text_);

  const std::string name = toml_key_text(key_);
  const auto refuse = [&](std::size_t line, const std::string& how) {
    throw std::runtime_error(where_ + ":" + std::to_string(line) + ": " + name + " is " + how + "; handoff edits only a [" + name +
                             "] table of its own: make it one or take it out (nothing was changed)");
  };
  bool owned = false;       // the current table is the key's or one of its sub-tables
  bool last_owned = false;  // the statement before was one of the key's table
  for (const toml_statement& st : toml_statements(text_, where_)) {
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
    for (std::size_t i = spans_.size(); i-- > 1;) out = toml_cut(std::move(out), spans_[i].begin, spans_[i].end);
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
  for (std::size_t i = spans_.size(); i-- > 0;) out = toml_cut(std::move(out), spans_[i].begin, spans_[i].end);
  return out;
}

}  // namespace handoff::cli::codex
