// The limits one projection is held to (projection.hpp), apart from the projection itself so
// the parts that size it (projection_notice, the batch's caps) need not include it.
#pragma once

#include <cstddef>

namespace handoff {

struct projection_limits {
  std::size_t max_bytes = 16 * 1024;  // bound on the whole projection, UTF-8 bytes
  std::size_t max_lines = 600;        // bound on the whole projection's lines
  double head_share = 0.75;           // share of the body budget for the head, [0.05, 0.95]
  bool outline = true;                // list the omitted lines' headings (outline.hpp); false:
                                      // head, marker, tail and footer only, as before the outline
};

// Smallest limits project() accepts for a cut text; below them the marker and footer
// alone would not fit (the budget's floors are at or above these).
inline constexpr std::size_t min_projection_bytes = 512;
inline constexpr std::size_t min_projection_lines = 8;

}  // namespace handoff
