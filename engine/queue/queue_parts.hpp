// Inside the durable queue (pending_queue.hpp is its contract): the parts pending_queue composes,
// and the one mutex that joins them. Private to the queue's sources.
//
//   queue_index       what is held, by key and seq, where it is, its texts, the deliveries, the
//                     segment counts: memory only (queue_index.hpp)
//   queue_tombstones  what left: done/ files and the few kept in memory (queue_tombstones.hpp)
//   journal           the segments (journal.hpp); texts the large texts (texts/)
//   queue_stats       the snapshot statistics() returns (queue_stats.hpp)
//   queue_compaction  when and how the journal is rewritten (queue_compaction.hpp)
//   queue_writer      the thread, the submitted changes, group commit, the put callbacks, zeros
//                     ahead, the spare text file (queue_writer.hpp)
//   queue_recovery    replay of the journal and legacy layout into the index and the tombstones,
//                     once, at start (queue_recovery.hpp)
// pending_queue itself (pending_queue.cpp, pending_queue_changes.cpp) holds the rules across
// them: recover() first; what a put, a retirement and a delivery are, judged against the index,
// the writer's puts in flight and the tombstones under one lock; the seqs; lookups.
//
// The locking rule, enforced here: `mutex` guards the index, the tombstones' memory, the
// writer's state, stats' counters and every member below it; the parts have no lock of their own
// (queue_stats' snapshot and the journal's map of segments have leaf locks, taken last, for a
// copy). It is never held across disk I/O after recovery, with one exception:
// queue_tombstones::find() reads done/<key> under it when a put or a lookup asks about a key no
// memory knows, so that a resend is judged atomically with the put it races. The journal and
// done/ are written without it by the writer alone (or by a put written alone, while the writer's
// writing_ keeps its thread away); a large text is written ahead, unnamed, by its put's own thread
// (make_put), also without it. open_text() reads under it because a segment may not go while a
// text in it is read. recover() holds it throughout: nothing else runs before it returns.
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <stdexcept>

#include "engine/fs/posix_io.hpp"
#include "engine/queue/journal.hpp"
#include "engine/queue/pending_queue.hpp"
#include "engine/queue/queue_compaction.hpp"
#include "engine/queue/queue_index.hpp"
#include "engine/queue/queue_stats.hpp"
#include "engine/queue/queue_tombstones.hpp"
#include "engine/queue/queue_writer.hpp"
#include "engine/store/artifact_store.hpp"

namespace handoff {

// Declared in the order they are made: each part is built from those above it, and the writer,
// last, starts its thread once everything else exists (and stops first).
struct queue_parts {
  // Opens the queue directory (checked: ours, 0700, not a symlink, before anything is created
  // in it), locks it, and makes every part; `again` is the writer's admit_again.
  queue_parts(std::filesystem::path dir, queue_options options, queue_writer::admit_again again);

  // With the lock held: throws std::logic_error before recover() ran.
  void require_recovered() const {
    if (!recovered) throw std::logic_error("pending_queue: call recover() before using the queue");
  }

  std::filesystem::path dir;
  queue_options options;
  unique_fd dir_fd;
  unique_fd lock_fd;            // "lock": flock held for the queue's life, one process per queue
  artifact_store texts;         // texts/: content-addressed, verified, never overwritten
  unique_fd texts_fd;           // texts/ again, to list and remove texts no record uses
  queue_tombstones tombstones;  // done/; its memory under mutex
  handoff::journal journal;     // the writer's alone once recovered

  mutable std::mutex mutex;  // the locking rule above
  queue_index index;
  queue_stats stats;
  bool recovered = false;     // recover() ran: every other call before it is a logic_error
  std::uint64_t next_seq = 1; // the seq the next new put gets
  queue_compaction compaction;
  queue_writer writer;  // last: starts once everything above exists
};

}  // namespace handoff
