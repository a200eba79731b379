// When and how the queue's journal is rewritten (docs/design.md §8, "Segments"). Private to the
// queue's sources.
//
// Owns: the decision, after each group, to seal the active segment and start a new one (at
// segment_bytes), to copy forward what is still needed in a mostly dead sealed segment, and to
// remove sealed segments nothing needs, oldest first; and whether the active segment still
// lacks its mark (a refused write_mark, tried again after the next group).
// Locking: run() is the writer's alone, on its thread, with no other group being written; it
// takes the queue's mutex (queue_parts.hpp) only to read and change the index and the
// tombstones' memory, never across the journal's appends, done/'s syncs or a removal.
// Guarantees:
//   - no retire entry goes while the put it retires may still be replayed: a segment goes only
//     when the index says nothing in it is needed or stuck, every older one has gone, and the
//     tombstone files of its retire entries are synced (none is left in memory only);
//   - no older segment goes before the active one starts with a mark (the next seq), so seqs
//     keep increasing across a restart once every older segment is gone;
//   - a refused write leaves things as they were: tried again after the next group.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>

#include "engine/queue/journal.hpp"
#include "engine/queue/queue_index.hpp"
#include "engine/queue/queue_stats.hpp"
#include "engine/queue/queue_tombstones.hpp"

namespace handoff {

class queue_compaction {
 public:
  struct parts {  // all outlive the compaction
    std::mutex& mutex;  // the queue's; guards index, tombstones' memory and stats
    queue_index& index;
    queue_tombstones& tombstones;
    handoff::journal& journal;
    queue_stats& stats;
  };
  // `next_seq`, called with the queue's mutex held: the seq the next put will get (a new
  // segment's mark).
  queue_compaction(parts p, std::size_t segment_bytes, std::function<std::uint64_t()> next_seq)
      : p_(p), segment_bytes_(segment_bytes), next_seq_(std::move(next_seq)) {}

  // After each group (the writer's, without the queue's mutex): rotates, copies forward and
  // removes what it can; publishes the journal's new size.
  void run();

 private:
  bool write_mark();
  bool refile_tombstones();
  void copy_forward(std::uint64_t segment);

  parts p_;
  std::size_t segment_bytes_;
  std::function<std::uint64_t()> next_seq_;
  bool mark_missing_ = false;  // the active segment has no mark yet (write_mark failed)
};

}  // namespace handoff
