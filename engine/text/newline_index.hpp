// The offsets of the '\n' bytes near a text's two ends, kept by the pass that reads the whole
// text anyway (scan_headings()), so that the cut (cut_body()) finds the lines it can show
// without a memchr per line: on short lines each of those mispredicts a branch or two, and the
// cut of a text with an outline is made up to three times.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace handoff {

struct newline_index {
  std::size_t head_limit = 0;  // every '\n' of text[0, head_limit) is in `head`
  std::size_t tail_from = std::numeric_limits<std::size_t>::max();  // every '\n' of text[tail_from, size) is in `tail`
  std::vector<std::size_t> head;  // ascending
  std::vector<std::size_t> tail;  // ascending

  // Ready to keep the '\n' bytes of the first and the last `edge_bytes` of a text of `size` bytes.
  void reset(std::size_t size, std::size_t edge_bytes) {
    head_limit = edge_bytes < size ? edge_bytes : size;
    tail_from = size - head_limit;
    head.clear();
    tail.clear();
    // Room for lines of 32 bytes on average, so that most texts need no reallocation.
    head.reserve(head_limit / 32);
    tail.reserve(head_limit / 32);
  }

  // Whether a '\n' in text[begin, end) would be kept.
  bool wants(std::size_t begin, std::size_t end) const noexcept { return begin < head_limit || end > tail_from; }

  // The scan's '\n' at `offset`, in the text's order.
  void add(std::size_t offset) {
    if (offset < head_limit) head.push_back(offset);
    if (offset >= tail_from) tail.push_back(offset);
  }

  // The scan's '\n' bytes at base + each of `offsets` (ascending), in the text's order: a
  // chunk's at a time, each side's share copied in one go rather than tested a byte at a time.
  void add(std::size_t base, std::span<const std::uint16_t> offsets) {
    if (base < head_limit) {
      const auto end = std::lower_bound(offsets.begin(), offsets.end(), head_limit - base);
      append(head, base, offsets.first(static_cast<std::size_t>(end - offsets.begin())));
    }
    if (!offsets.empty() && base + offsets.back() >= tail_from) {
      const auto first = tail_from > base ? std::lower_bound(offsets.begin(), offsets.end(), tail_from - base)
                                          : offsets.begin();
      append(tail, base, offsets.last(static_cast<std::size_t>(offsets.end() - first)));
    }
  }

 private:
  static void append(std::vector<std::size_t>& to, std::size_t base, std::span<const std::uint16_t> offsets) {
    const std::size_t old_size = to.size();
    to.resize(old_size + offsets.size());
    std::size_t* const out = to.data() + old_size;
    for (std::size_t i = 0; i < offsets.size(); ++i) out[i] = base + offsets[i];
  }
};

}  // namespace handoff
