// The caps the daemon puts on client-supplied fields (docs/protocol.md, "Limits").
#pragma once

#include <cstddef>
#include <cstdint>

namespace handoff::rpc {

// Caps on client-supplied fields; decoding rejects anything larger (defaults shown).
struct wire_limits {
  std::size_t max_id_bytes = 256;          // parentId, childId: 1..256 bytes, no control chars
  std::size_t max_title_bytes = 1024;      // title
  std::size_t max_error_bytes = 8 * 1024;  // error text
  std::size_t max_progress_bytes = 64 * 1024;        // one progress text
  std::size_t max_final_text_bytes = 64 * 1024 * 1024;  // finalText (frame cap still applies)
  std::size_t max_child_ids = 64;          // childIds per wait/cancel
  std::int64_t max_timeout_ms = 24LL * 3600 * 1000;  // timeoutMs: 0..24 h
};

}  // namespace handoff::rpc
