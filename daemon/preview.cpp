#include "preview.hpp"

#include "utf8.hpp"

namespace handoff::daemon {

preview make_preview(std::string_view text) {
  std::size_t start = text.size() > preview_max_bytes ? utf8_ceil(text, text.size() - preview_max_bytes) : 0;
  // Walk back over at most 20 line starts within the byte window.
  std::size_t lines = 1;
  std::size_t end = text.size();
  if (end > start && text[end - 1] == '\n') --end;  // a trailing newline does not start a line
  for (std::size_t i = end; i > start; --i) {
    if (text[i - 1] == '\n' && ++lines > preview_max_lines) {
      start = i;
      break;
    }
  }
  return {std::string(text.substr(start)), start > 0};
}

void append_progress(std::string& log, std::string_view text) {
  if (!log.empty() && log.back() != '\n') log += '\n';
  log.append(text);
  if (log.size() > 2 * preview_max_bytes) {
    std::size_t cut = utf8_ceil(log, log.size() - preview_max_bytes);
    log.erase(0, cut);
  }
}

}  // namespace handoff::daemon
