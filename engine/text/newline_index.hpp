// The offsets of the '\n' bytes near a text's two ends, kept by the pass that reads the whole
// text anyway (scan_headings()), so that the cut (cut_body()) finds the lines it can show
// without a memchr per line: on short lines each of those mispredicts a branch or two, and the
// cut of a text with an outline is made up to three times.
#pragma once

#include <cstddef>
#include <limits>
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

  // The scan's '\n' at `offset`, in the text's order.
  void add(std::size_t offset) {
    if (offset < head_limit) head.push_back(offset);
    if (offset >= tail_from) tail.push_back(offset);
  }
};

}  // namespace handoff
