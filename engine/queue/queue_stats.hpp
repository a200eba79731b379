// The queue's statistics (pending_queue::stats) as a snapshot any thread may read without
// waiting for the disk. Private to the queue's sources.
//
// Owns: the writer's counters (groups, the changes they carried, the journal's bytes as the
// writer last saw them) and the published snapshot.
// Locking: the counters are guarded by the queue's mutex (queue_parts.hpp), like everything
// publish() reads; the snapshot has its own mutex, a leaf: taken last, for a copy, never held
// across I/O or while another lock is taken. So statistics() never waits for a group.
// Guarantees: a snapshot is whole (all its fields from one publish()), taken after the last
// change that published, and may lag a change being made right now.
#pragma once

#include <cstddef>
#include <mutex>

#include "engine/queue/pending_queue.hpp"
#include "engine/queue/queue_index.hpp"
#include "engine/queue/queue_tombstones.hpp"

namespace handoff {

class queue_stats {
 public:
  // --- With the queue's mutex held.
  void wrote_group(std::size_t changes) noexcept {
    ++groups_;
    changes_ += changes;
  }
  void journal_is(std::size_t bytes) noexcept { journal_bytes_ = bytes; }
  // Takes a new snapshot of the index, the tombstones and the counters.
  void publish(const queue_index& index, const queue_tombstones& tombstones) noexcept {
    pending_queue::stats s;
    s.results = index.results();
    s.text_bytes = index.text_bytes();
    s.deliveries = index.deliveries();
    s.tombstones = tombstones.count();
    s.journal_bytes = journal_bytes_;
    s.groups = groups_;
    s.changes = changes_;
    std::lock_guard lock(snapshot_mutex_);
    snapshot_ = s;
  }

  // --- Any thread, with or without the queue's mutex.
  pending_queue::stats snapshot() const {
    std::lock_guard lock(snapshot_mutex_);
    return snapshot_;
  }

 private:
  std::size_t journal_bytes_ = 0;
  std::size_t groups_ = 0;
  std::size_t changes_ = 0;

  mutable std::mutex snapshot_mutex_;  // guards snapshot_ only
  pending_queue::stats snapshot_;
};

}  // namespace handoff
