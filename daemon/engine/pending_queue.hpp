// The durable queue (docs/design.md §8): every acknowledged completion is on disk before the
// daemon answers, and leaves only when its delivery was confirmed.
//
// Layout under the queue directory (0700, ours, opened with O_NOFOLLOW like the store):
//   texts/<sha256>.txt         full final texts, content-addressed, shared by equal texts
//   records/<key>.json         one per held completion; key = sha256(parentId "\0" childId)
//   deliveries/<id>.json       one per auto-delivery sent and not yet acknowledged
//   done/<key>                 tombstones of delivered/consumed completions (idempotent resend)
// Files are written to a temp name, fsynced, renamed into place, and the directory fsynced.
// Thread-safe (one internal mutex); calls block on disk I/O, so the daemon makes them from its
// worker pool, never from the I/O thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/artifact_store.hpp"
#include "engine/mapped_file.hpp"
#include "engine/posix_io.hpp"
#include "engine/queue_records.hpp"

namespace handoff {

// Thrown when the disk refuses a write: the completion must NOT be acknowledged.
struct queue_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Thrown by put() when the same parent+child was already held with a different final text.
struct queue_conflict : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class pending_queue {
 public:
  // Opens or creates the queue at absolute `dir` (0700, ours; else std::runtime_error).
  explicit pending_queue(std::filesystem::path dir);
  ~pending_queue();
  pending_queue(const pending_queue&) = delete;
  pending_queue& operator=(const pending_queue&) = delete;

  struct recovered {
    std::vector<held_result> results;        // every held completion, by seq
    std::vector<stored_delivery> deliveries; // every unacknowledged delivery
  };
  // Loads what a previous run left: removes temp files, drops records whose text is missing or
  // does not hash to its name (logged by the caller from `problems`), and texts no record uses.
  // Call once, before any other call.
  recovered recover(std::vector<std::string>* problems = nullptr);

  struct put_outcome {
    held_result held;
    bool duplicate = false;  // the same parent+child and text were already held or delivered
    bool delivered = false;  // duplicate of a result that already left the queue: held.seq is
                             // its old seq and nothing is held for it any more
  };
  // Makes the completion durable (text, then record, each fsynced) and returns it. Idempotent on
  // (parent, child) with the same text. Throws queue_conflict for the same key with another text,
  // queue_error when the disk fails (nothing half-written is left), std::invalid_argument when
  // an id, title or error is not valid UTF-8 or the record would exceed 16 MiB.
  put_outcome put(const completion& c, std::string_view final_text);

  // Maps a held result's text read-only. Throws queue_error when it is gone.
  mapped_file open_text(const held_result& r) const;
  // Path of a held result's text (for linking it into the artifact store).
  std::filesystem::path text_path(std::string_view sha256) const;

  // Records an auto-delivery before it is sent (throws queue_error).
  void begin_delivery(const stored_delivery& d);
  // The parent acknowledged the delivery: its results leave the queue (as tombstones). An
  // unknown id is ignored (a repeated acknowledgement).
  // These two never throw for disk trouble: the results leave memory regardless, and what the
  // disk refused comes back as plain words for the caller to log (empty when all went well).
  // A result whose tombstone could not be written keeps its record, so after a restart it is
  // delivered again: at least once, never lost.
  std::vector<std::string> complete_delivery(std::string_view delivery_id);
  // Results consumed by a wait or a cancel leave the queue (as tombstones). Unknown seqs are
  // ignored.
  std::vector<std::string> consume(const std::vector<std::uint64_t>& seqs);

  struct stats {
    std::size_t results = 0;      // held completions
    std::size_t text_bytes = 0;   // bytes of their texts on disk (shared texts counted once)
    std::size_t deliveries = 0;   // unacknowledged deliveries
    std::size_t tombstones = 0;
  };
  // A snapshot taken after the last change: never waits for a write in progress (so the I/O
  // thread may call it), and may lag a change being made right now.
  stats statistics() const;

  // Forgets tombstones older than `age` (resends after that are treated as new).
  std::size_t expire_tombstones(std::chrono::seconds age);

  const std::filesystem::path& dir() const noexcept { return dir_; }

 private:
  void require_recovered() const;
  std::vector<std::string> retire(const std::vector<std::string>& keys);
  // Recounts `snapshot_` from the maps; call with mutex_ held, as a change ends.
  void publish_stats() noexcept;
  // Declared after the lock in each changing method, so it publishes before the lock is released.
  struct publish_on_exit {
    pending_queue& q;
    ~publish_on_exit() { q.publish_stats(); }
  };

  std::filesystem::path dir_;
  unique_fd dir_fd_;
  artifact_store texts_;      // texts/: content-addressed, verified, never overwritten
  unique_fd texts_fd_;        // texts/ again, to list and remove texts no record uses
  unique_fd records_fd_;      // records/
  unique_fd deliveries_fd_;   // deliveries/
  unique_fd done_fd_;         // done/
  mutable std::mutex mutex_;
  bool recovered_ = false;
  std::uint64_t next_seq_ = 1;
  struct entry {
    held_result held;
  };
  std::unordered_map<std::string, entry> by_key_;                // key -> held
  std::unordered_map<std::uint64_t, std::string> key_by_seq_;    // seq -> key
  std::unordered_map<std::string, tombstone> tombstones_;        // key -> what was delivered
  std::unordered_map<std::string, std::size_t> text_refs_;       // sha256 -> records using it
  std::unordered_map<std::string, stored_delivery> deliveries_;  // id -> delivery
  mutable std::mutex stats_mutex_;  // guards snapshot_ only; never held across I/O
  stats snapshot_;
};

}  // namespace handoff
