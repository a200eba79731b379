// One change handed to the queue's writer (queue_writer.hpp): what the caller asked, the journal
// entries that make it durable, and how it ended. Private to the queue's sources.
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/fs/posix_io.hpp"
#include "engine/queue/pending_queue.hpp"
#include "engine/queue/queue_files.hpp"
#include "engine/queue/queue_records.hpp"

namespace handoff {

struct queue_change {
  enum class kind { put, retire, delivery };
  kind what = kind::put;
  std::vector<std::string> heads;  // encoded entry heads (journal_entry.hpp), in order

  // put
  std::string key;
  held_result held;
  text_place place = text_place::in_journal;
  std::string_view text;           // the caller keeps it alive until `done`
  pending_queue::put_callback done;
  bool created_text_file = false;  // this put wrote texts/<sha256>.txt
  std::optional<unique_fd> prewritten;  // the text, written and synced with no name while it was
                                        // hashed (in_file only): the writer links it

  // retire: the results leaving (key, tombstone) with the segment of their put entry and where
  // their text is; plus, when acknowledging a delivery, its id and the segment of its entry
  struct leaving {
    std::string key;
    tombstone t;
    std::uint64_t segment = 0;
    text_place place = text_place::in_journal;
  };
  std::vector<leaving> retired;
  std::string ack_id;
  std::uint64_t ack_segment = 0;

  // delivery
  stored_delivery delivery;

  // the outcome, set by the writer
  std::exception_ptr error;
  std::vector<std::string> problems;
  bool finished = false;  // under the queue's mutex; blocking callers wait for it (write_and_wait)

  std::size_t bytes() const {
    std::size_t n = text.size();
    for (const auto& h : heads) n += h.size();
    return n;
  }
};

}  // namespace handoff
