// Which queued texts the artifact store may hard-link instead of copying (batch_input::file),
// looked up from the daemon's side of the queue: pending_queue names where a text's file is
// (text_path); this opens that directory once per batch and offers a name only when a regular
// file is there. A text the queue keeps elsewhere than in a file of its own (or a directory that
// will not open) is simply not offered, and the store writes a copy as before.
//
// Stopgap until the queue offers it itself: pending_queue::text_file(sha256) ->
// std::optional<text_file> from the directory fd it already holds.
#pragma once

#include <optional>
#include <string_view>

#include "engine/pending_queue.hpp"
#include "engine/posix_io.hpp"
#include "engine/text_file.hpp"

namespace handoff::daemon {

class queue_text_files {
 public:
  explicit queue_text_files(const pending_queue& queue) : queue_(queue) {}

  // The queue's file holding the text of this hash, or nullopt. Blocking (openat, fstatat):
  // call on the pool. The text_file's dir_fd is valid while this object lives.
  std::optional<text_file> find(std::string_view sha256);

 private:
  const pending_queue& queue_;
  unique_fd dir_;       // the texts directory, opened at the first find()
  bool tried_ = false;  // whether opening it was tried (once per batch)
};

}  // namespace handoff::daemon
