#include "cli/harness/codex/toml_marked.hpp"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cli/harness/codex/toml_scan.hpp"

namespace handoff::cli::codex {
namespace {

// Whether the statement's line ends in handoff's mark.
bool toml_marked(std::string_view text, const toml_statement& st) {
  return toml_line(text, st.begin, st.end).ends_with(std::string("  ") + std::string(toml_mark));
}

}  // namespace

std::string toml_with_marked(const std::string& text, const std::string& where, const toml_marked_key& line,
                             std::string* users) {
  const toml::table root = toml_parse_checked(text, where);
  const std::string name = toml_key_text(line.table);
  const std::string nl = toml_newline(text);
  const std::string key_line = line.key + " = " + line.value + "  " + std::string(toml_mark) + nl;
  const std::vector<toml_statement> statements = toml_statements(text, where);
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
  const std::vector<toml_statement> statements = toml_statements(text, where);
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

}  // namespace handoff::cli::codex
