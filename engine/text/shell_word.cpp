#include "engine/text/shell_word.hpp"

namespace handoff {

void append_shell_word(std::string& out, std::string_view word) {
  // Each run up to a quote as it is, the quote as '\'' (close, escaped quote, reopen).
  out.push_back('\'');
  for (std::size_t quote; (quote = word.find('\'')) != std::string_view::npos; word.remove_prefix(quote + 1)) {
    out += word.substr(0, quote);
    out += "'\\''";
  }
  out += word;
  out.push_back('\'');
}

}  // namespace handoff
