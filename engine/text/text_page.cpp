// read_page() mirrors Pi 1.6.0's read tool (dist/core/tools/read.js and truncate.js):
//
//   lines = text.split("\n"); start = offset - 1; selected = lines[start, start + limit)
//   truncateHead(selected.join("\n")): unchanged when it has <= 2000 lines and <= 51200 bytes
//   (a trailing "\n" is not counted as a line), else the longest run of whole lines from the
//   start within both caps; if the first line alone is over 51200 bytes, nothing (a refusal).
//
// Pi 1.6.0 streams the file and keeps only the selected lines up to one past the caps, then
// calls truncateHead on those: the same result as on the whole selection. The greedy walk below
// gives the same lines in one pass: a selection's final empty line (the selection then ends in
// '\n') is exempt from the line cap, exactly as Pi's count drops it.
#include "engine/text/text_page.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "engine/text/text_shape.hpp"
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

namespace handoff {

read_plan::read_plan(std::string_view text, std::size_t first_line, std::size_t last_line,
                     const reader_profile& profile)
    : read_plan(text, first_line, 0, last_line, profile) {
  const std::size_t total = measure(text).lines;
  if (first_line == 0 || first_line > last_line || last_line > total) {
    throw std::out_of_range("lines " + std::to_string(first_line) + "-" + std::to_string(last_line) +
                            " are not within the text's " + std::to_string(total) + " lines");
  }
  pos_ = line_start(text, first_line);
}

read_plan::read_plan(std::string_view text, std::size_t first_line, std::size_t first_byte,
                     std::size_t last_line, const reader_profile& profile) noexcept
    : text_(text), profile_(&profile), line_(first_line), pos_(first_byte), last_line_(last_line) {}

std::optional<read_step> read_plan::next() noexcept {
  const std::size_t page_bytes = profile_->page_bytes;
  const std::size_t prefix = profile_->line_prefix_bytes;
  if (!in_long_line_) {
    if (line_ > last_line_) return std::nullopt;
    const std::size_t end = end_within(pos_, line_cap(*profile_));
    if (end == std::string_view::npos) {
      in_long_line_ = true;  // the read tool refuses this line: read it in byte ranges below
    } else {
      // Whole lines while the page stays within both caps: each next line costs its bytes,
      // the '\n' joining it to the page and the prefix the tool shows it with.
      read_step step{line_, line_, false, pos_, end};
      std::size_t cost = page_cost(*profile_, end - pos_, 1);
      for (std::size_t lines = 1; step.last_line < last_line_ && lines < profile_->page_lines; ++lines) {
        if (cost + 1 + prefix > page_bytes) break;
        const std::size_t stop =
            end_within(step.end_byte + 1, std::min(page_bytes - cost - 1 - prefix, line_cap(*profile_)));
        if (stop == std::string_view::npos) break;
        cost += 1 + prefix + (stop - (step.end_byte + 1));
        ++step.last_line;
        step.end_byte = stop;
      }
      line_ = step.last_line + 1;
      pos_ = step.end_byte + 1;
      return step;
    }
  }
  // A range of the long line: the rest of it when that is at most a page, else a page ending
  // on a character boundary (a run of continuation bytes longer than a sequence, not UTF-8, is
  // cut anyway).
  read_step step{line_, line_, true, pos_, end_within(pos_, page_bytes)};
  if (step.end_byte == std::string_view::npos) {
    step.end_byte = utf8_floor(text_, pos_ + page_bytes);
    if (step.end_byte <= pos_) step.end_byte = pos_ + page_bytes;
    pos_ = step.end_byte;
  } else {
    in_long_line_ = false;
    ++line_;
    pos_ = step.end_byte + 1;
  }
  return step;
}

std::size_t read_plan::end_within(std::size_t start, std::size_t max_bytes) const noexcept {
  const std::size_t left = text_.size() - std::min(start, text_.size());
  const std::size_t window = std::min(left, max_bytes + 1);
  if (window > 0) {
    if (const void* newline = std::memchr(text_.data() + start, '\n', window)) {
      return static_cast<std::size_t>(static_cast<const char*>(newline) - text_.data());
    }
  }
  return left <= max_bytes ? text_.size() : std::string_view::npos;
}

}  // namespace handoff
