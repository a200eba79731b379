// What the durable queue keeps about a completion, in memory and in its files (pending_queue.hpp
// holds them, queue_files.hpp encodes them): the completion as a client reported it, the held
// result, an unacknowledged auto-delivery, and the tombstone a result leaves behind.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/text/result_status.hpp"
#include "engine/text/text_shape.hpp"

namespace handoff {

// What a client said about a finished child (finalText apart).
struct completion {
  std::string parent_id;
  std::string child_id;
  std::string title;
  result_status status = result_status::done;
  std::string error;
};

// A completion as the queue holds it; the text stays on disk.
struct held_result {
  std::uint64_t seq = 0;           // completion order; unique and increasing across restarts
  completion info;
  std::string sha256;              // of the final text: names texts/<sha256>.txt
  text_shape shape;                // the final text's bytes and lines
  std::int64_t completed_unix_ms = 0;
};

// An auto-delivery sent to a parent and not yet acknowledged.
struct stored_delivery {
  std::string parent_id;
  std::string delivery_id;
  std::vector<std::uint64_t> seqs;  // the results it carries (deferred ones are not listed)
  std::string payload;              // the exact parent/deliver params, resent as they were
};

// What is left of a completion once delivered or consumed: enough to recognise a resend.
struct tombstone {
  std::string sha256;             // of the final text that was delivered
  std::uint64_t seq = 0;          // the seq the result had
  std::int64_t done_unix_ms = 0;  // when it left the queue
};

}  // namespace handoff
