// The cut of a projection, in two steps that each look only at bytes they could show:
//
//   1. whole lines: the head within its share, then the tail within its share plus what the
//      head left, then the head again within what the tail left;
//   2. a partial line on a side whose next line alone is longer than its byte share: that
//      line's start (head) or end (tail), cut at a character boundary, in the room left.
//
// Nothing is retried: each pass goes on from where the last one stopped, and no search for a
// line's end goes further than the budget it is searched for, so the cost is linear in the
// budget, whatever the size of the text.
//
// At least one line is always left between head and tail (a side takes a whole line only
// while the other side's next line is a different one), so the omitted range is never empty.
#include "engine/text/projection_cut.hpp"

#include <string.h>  // memrchr: a GNU extension, declared by glibc's <string.h> only

#include <algorithm>
#include <cmath>
#include <cstring>

#include "utf8.hpp"

namespace handoff {
namespace {

std::size_t less_or_zero(std::size_t a, std::size_t b) noexcept { return a > b ? a - b : 0; }

class cutter {
 public:
  cutter(std::string_view text, std::size_t total_lines, const newline_index* newlines)
      : text_(text), total_lines_(total_lines), newlines_(newlines) {
    cut_.tail_start = text.size();
    // The empty line after a final '\n' is the tail's first, and free: see free_final_line_.
    if (free_final_line_ && whole_line_free()) cut_.tail_lines = 1;
  }

  // Output each side takes so far: its shown bytes plus one '\n' per shown line (the free
  // final empty line costs neither: its '\n' is the text's own, and it shares the footer's line).
  std::size_t head_bytes() const noexcept { return cut_.head_end + (cut_.head_partial ? 1 : 0); }
  std::size_t head_lines() const noexcept { return cut_.head_lines + (cut_.head_partial ? 1 : 0); }
  std::size_t tail_lines() const noexcept {
    return cut_.tail_lines + (cut_.tail_partial ? 1 : 0) - (free_final_line_ ? 1 : 0);
  }
  std::size_t tail_bytes() const noexcept {
    if (cut_.tail_lines + (cut_.tail_partial ? 1 : 0) == 0) return 0;
    return text_.size() - cut_.tail_start + (free_final_line_ ? 0 : 1);
  }

  // Takes whole lines from the front while the head stays within max_bytes / max_lines.
  void take_head_lines(std::size_t max_bytes, std::size_t max_lines) noexcept {
    if (take_head_lines_indexed(max_bytes, max_lines)) return;
    while (!cut_.head_partial && whole_line_free() && head_lines() < max_lines &&
           head_bytes() < max_bytes) {
      const std::size_t room = max_bytes - head_bytes();
      const std::size_t pos = cut_.head_end;
      // The next line fits when its '\n' is among the next `room` bytes (it costs length + 1).
      const std::size_t window = std::min(room, text_.size() - pos);
      const std::size_t newline = next_newline(pos, window);
      if (newline == npos) return;
      cut_.head_end = newline + 1;
      ++cut_.head_lines;
    }
  }

  // Takes whole lines from the back while the tail stays within max_bytes / max_lines.
  void take_tail_lines(std::size_t max_bytes, std::size_t max_lines) noexcept {
    if (take_tail_lines_indexed(max_bytes, max_lines)) return;
    while (!cut_.tail_partial && whole_line_free() && tail_lines() < max_lines &&
           tail_bytes() < max_bytes) {
      const std::size_t room = max_bytes - tail_bytes();
      const std::size_t end = tail_line_end();
      // The next line fits when the '\n' before it is among the `room` bytes before its end.
      const std::size_t window = std::min(room, end);
      const std::size_t newline = last_newline(end, window);
      if (newline == npos) return;
      cut_.tail_start = newline + 1;
      ++cut_.tail_lines;
    }
  }

  // True when the head's next line costs more than `share` bytes of output (length >= share).
  bool head_line_longer_than(std::size_t share) const noexcept {
    const std::size_t pos = cut_.head_end;
    if (cut_.head_partial || text_.size() - pos < share) return false;
    return next_newline(pos, share) == npos;
  }

  // True when the tail's next line costs more than `share` bytes of output (length >= share).
  bool tail_line_longer_than(std::size_t share) const noexcept {
    const std::size_t end = tail_line_end();
    if (cut_.tail_partial || end < share) return false;
    return last_newline(end, share) == npos;
  }

  // Shows the start of the head's next line in `room` bytes of output (its '\n' included).
  void take_head_part(std::size_t room) noexcept {
    if (room < 2 || cut_.head_partial) return;
    const std::size_t pos = cut_.head_end;
    std::size_t limit = std::min(pos + (room - 1), cut_.tail_start);
    // The line is longer than the room; this bound only keeps a wrong caller inside the line.
    if (const std::size_t newline = next_newline(pos, limit - pos); newline != npos) limit = newline;
    const std::size_t end = utf8_floor(text_, limit);
    if (end <= pos) return;
    cut_.head_end = end;
    cut_.head_partial = true;
  }

  // Shows the end of the tail's next line in `room` bytes of output (its '\n' included).
  void take_tail_part(std::size_t room) noexcept {
    if (room < 2 || cut_.tail_partial) return;
    const std::size_t end = tail_line_end();
    std::size_t limit = std::max(end - std::min(end, room - 1), cut_.head_end);
    if (const std::size_t newline = last_newline(end, end - limit); newline != npos) limit = newline + 1;
    const std::size_t start = utf8_ceil(text_, limit);
    if (start >= end) return;
    cut_.tail_start = start;
    cut_.tail_partial = true;
  }

  const body_cut& result() const noexcept { return cut_; }

 private:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  // The first '\n' of text[pos, pos + window), or npos; from the index when it holds that range.
  std::size_t next_newline(std::size_t pos, std::size_t window) const noexcept {
    if (newlines_ == nullptr || pos + window > newlines_->head_limit) {
      const void* newline = std::memchr(text_.data() + pos, '\n', window);
      return newline == nullptr ? npos : offset_of(newline);
    }
    const std::vector<std::size_t>& at = newlines_->head;
    const auto next = std::lower_bound(at.begin(), at.end(), pos);
    return next != at.end() && *next - pos < window ? *next : npos;
  }

  // The last '\n' of text[end - window, end), or npos.
  std::size_t last_newline(std::size_t end, std::size_t window) const noexcept {
    if (newlines_ == nullptr || end - window < newlines_->tail_from) {
      const void* newline = ::memrchr(text_.data() + (end - window), '\n', window);
      return newline == nullptr ? npos : offset_of(newline);
    }
    const std::vector<std::size_t>& at = newlines_->tail;
    const auto after = std::lower_bound(at.begin(), at.end(), end);
    return after != at.begin() && end - *(after - 1) <= window ? *(after - 1) : npos;
  }

  // How many more whole lines may be taken, at the head and the tail together (see
  // whole_line_free()).
  std::size_t free_lines() const noexcept {
    const std::size_t taken = cut_.head_lines + cut_.tail_lines + 1;
    return total_lines_ > taken ? total_lines_ - taken : 0;
  }

  // take_head_lines() in one step, from the index: the lines whose '\n' lies before max_bytes,
  // as many as the lines allow. False when the index does not hold those bytes.
  bool take_head_lines_indexed(std::size_t max_bytes, std::size_t max_lines) noexcept {
    if (newlines_ == nullptr || std::min(max_bytes, text_.size()) > newlines_->head_limit) return false;
    if (cut_.head_partial) return true;
    const std::vector<std::size_t>& at = newlines_->head;
    const auto first = std::lower_bound(at.begin(), at.end(), cut_.head_end);
    const auto last = std::lower_bound(first, at.end(), max_bytes);
    std::size_t take = static_cast<std::size_t>(last - first);
    take = std::min(take, max_lines > head_lines() ? max_lines - head_lines() : 0);
    take = std::min(take, free_lines());
    if (take == 0) return true;
    cut_.head_end = first[static_cast<std::ptrdiff_t>(take) - 1] + 1;
    cut_.head_lines += take;
    return true;
  }

  // take_tail_lines() in one step: each line taken leaves less room for the next by its own
  // cost, so the lines taken are those whose '\n' lies at or after `size - max_bytes` (one
  // byte further back when the free final line is the text's own '\n').
  bool take_tail_lines_indexed(std::size_t max_bytes, std::size_t max_lines) noexcept {
    if (newlines_ == nullptr) return false;
    const std::size_t own = free_final_line_ ? 1 : 0;
    const std::size_t from = text_.size() > max_bytes + own ? text_.size() - max_bytes - own : 0;
    if (from < newlines_->tail_from) return false;
    if (cut_.tail_partial || free_lines() == 0) return true;
    const std::vector<std::size_t>& at = newlines_->tail;
    const auto first = std::lower_bound(at.begin(), at.end(), from);
    const auto last = std::lower_bound(first, at.end(), tail_line_end());
    std::size_t take = static_cast<std::size_t>(last - first);
    take = std::min(take, max_lines > tail_lines() ? max_lines - tail_lines() : 0);
    take = std::min(take, free_lines());
    if (take == 0) return true;
    cut_.tail_start = *(last - static_cast<std::ptrdiff_t>(take)) + 1;
    cut_.tail_lines += take;
    return true;
  }

  // A whole line may be taken only while the head's next line (head_lines + 1) comes before
  // the tail's next line (total_lines - tail_lines): one line then still lies between.
  bool whole_line_free() const noexcept {
    return cut_.head_lines + 1 < total_lines_ - cut_.tail_lines;
  }

  // End of the tail's next line: the '\n' that ends it, or the text's end for the last line.
  std::size_t tail_line_end() const noexcept {
    return cut_.tail_lines == 0 ? text_.size() : cut_.tail_start - 1;
  }

  std::size_t offset_of(const void* p) const noexcept {
    return static_cast<std::size_t>(static_cast<const char*>(p) - text_.data());
  }

  std::string_view text_;
  std::size_t total_lines_;
  // The text ends in '\n': its last line is empty and always in the tail (total_lines >= 2).
  bool free_final_line_ = !text_.empty() && text_.back() == '\n';
  const newline_index* newlines_;
  body_cut cut_;
};

}  // namespace

body_cut cut_body(std::string_view text, std::size_t total_lines, body_budget budget, double head_share,
                  const newline_index* newlines) {
  const auto head_share_bytes =
      static_cast<std::size_t>(static_cast<double>(budget.bytes) * head_share);
  const std::size_t tail_share_bytes = budget.bytes - head_share_bytes;
  // Each side gets at least one line, so the head and the tail are both recognisable.
  const auto rounded_lines =
      static_cast<std::size_t>(std::llround(static_cast<double>(budget.lines) * head_share));
  const std::size_t head_share_lines = std::clamp<std::size_t>(rounded_lines, 1, budget.lines - 1);

  cutter c(text, total_lines, newlines);
  c.take_head_lines(head_share_bytes, head_share_lines);
  c.take_tail_lines(budget.bytes - c.head_bytes(), budget.lines - c.head_lines());
  c.take_head_lines(budget.bytes - c.tail_bytes(), budget.lines - c.tail_lines());

  const std::size_t lines_left = budget.lines - c.head_lines() - c.tail_lines();
  if (lines_left == 0) return c.result();
  const bool head_wants_part = c.head_line_longer_than(head_share_bytes);
  const bool tail_wants_part = c.tail_line_longer_than(tail_share_bytes);
  if (head_wants_part) {
    // When both sides cut a line, each first fills its own share; the head's unused part of
    // its share goes to the tail below.
    const std::size_t room = budget.bytes - c.head_bytes() - c.tail_bytes();
    const bool both = tail_wants_part && lines_left >= 2;
    c.take_head_part(both ? std::min(room, less_or_zero(head_share_bytes, c.head_bytes())) : room);
  }
  if (tail_wants_part && c.head_lines() + c.tail_lines() < budget.lines) {
    c.take_tail_part(budget.bytes - c.head_bytes() - c.tail_bytes());
  }
  return c.result();
}

}  // namespace handoff
