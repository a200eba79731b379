// read_page() mirrors Pi's read tool (dist/core/tools/read.js and truncate.js, 0.99):
//
//   lines = text.split("\n"); start = offset - 1; selected = lines[start, start + limit)
//   truncateHead(selected.join("\n")): unchanged when it has <= 2000 lines and <= 51200 bytes
//   (a trailing "\n" is not counted as a line), else the longest run of whole lines from the
//   start within both caps; if the first line alone is over 51200 bytes, nothing.
//
// The greedy walk below gives the same lines in one pass: a selection's final empty line (the
// selection then ends in '\n') is exempt from the line cap, exactly as Pi's count drops it.
#include "engine/text_page.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "engine/text_shape.hpp"
#include "utf8.hpp"

namespace handoff {
namespace {

// Byte offset where 1-based line `line` starts; the line must exist.
std::size_t line_start(std::string_view text, std::size_t line) noexcept {
  std::size_t pos = 0;
  for (std::size_t n = 1; n < line; ++n) {
    const void* newline = std::memchr(text.data() + pos, '\n', text.size() - pos);
    pos = static_cast<std::size_t>(static_cast<const char*>(newline) - text.data()) + 1;
  }
  return pos;
}

// Offset of the '\n' that ends the line starting at `start`, or the text's end.
std::size_t line_end(std::string_view text, std::size_t start) noexcept {
  if (start >= text.size()) return text.size();  // also keeps a null data() out of memchr
  const void* newline = std::memchr(text.data() + start, '\n', text.size() - start);
  return newline == nullptr
             ? text.size()
             : static_cast<std::size_t>(static_cast<const char*>(newline) - text.data());
}

}  // namespace

text_page read_page(std::string_view text, const page_request& request) {
  text_page page;
  page.total_lines = measure(text).lines;
  if (request.offset == 0 || request.offset > page.total_lines) {
    throw std::out_of_range("Offset " + std::to_string(request.offset) +
                            " is beyond end of file (" + std::to_string(page.total_lines) +
                            " lines total)");
  }
  const std::size_t available = page.total_lines - request.offset + 1;
  const std::size_t selected = std::min(request.limit.value_or(available), available);
  page.first_line = request.offset;

  const std::size_t start = line_start(text, request.offset);
  std::size_t end = start;  // end of the kept lines, exclusive
  std::size_t kept = 0;
  for (std::size_t pos = start; kept < selected; pos = end + 1) {
    const std::size_t stop = line_end(text, pos);
    const std::size_t cost = stop - pos + (kept > 0 ? 1 : 0);  // the line and the '\n' before it
    const bool trailing_empty = kept > 0 && kept + 1 == selected && stop == pos;
    if ((kept >= read_max_lines && !trailing_empty) || (end - start) + cost > read_max_bytes) break;
    end = stop;
    ++kept;
  }
  page.cut = kept < selected;

  if (kept == 0 && selected > 0) {
    // The first line alone is over the byte cap: show its first 50 KiB, as Pi's hint would.
    end = utf8_floor(text, start + read_max_bytes);
    kept = 1;
    page.partial_line = true;
  }
  page.text.assign(text.substr(start, end - start));
  page.last_line = request.offset + kept - 1;
  if (page.last_line < page.total_lines) page.next_offset = page.last_line + 1;
  return page;
}

}  // namespace handoff
