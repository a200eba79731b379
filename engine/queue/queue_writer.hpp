// The queue's writer (docs/design.md §8, "Group commit"): every change is made durable here, in
// groups. Private to the queue's sources.
//
// Owns: the writer thread; the changes submitted and not yet taken by a group, and the condition
// variable that wakes the thread for them; the puts in flight by key, with the resends waiting
// behind each; whether a group is being written (by the thread, or by a put written alone) and
// whether such a put's tidying is due; the condition variable blocking changes wait on; the work
// between groups (compaction, keeping a spare text file and zeros ahead).
// Locking: all of the above is guarded by the queue's one mutex (queue_parts.hpp), which the
// writer is given and takes briefly, for memory only (to take a group, to ask whether a text is
// held already, to apply a written group to the index and the tombstones, to settle its changes,
// to see whether changes wait): never across a text's save, the journal's append and fdatasync,
// done/'s files, a text's removal or compaction (queue_compaction.hpp, run by the writer thread
// after each group, its own or a put's written alone).
// Guarantees:
//   - one group at a time: while one is written (writing_), what arrives waits for the next;
//   - a change is answered (a put's callback called, a blocking change settled) only once its
//     group's texts and its journal entries are synced, or refused (a queue_error; a refused
//     group leaves no bytes in the journal);
//   - memory follows the disk: a put or a delivery enters the index only once its entry is
//     written, and a retirement (released from memory by the caller) settles its segment's
//     count and its tombstone only once its group is written or refused;
//   - a resend that waited behind a put in flight is handed back (admit_again) once that put is
//     settled, without the lock;
//   - stop() writes every change handed over before it, then ends the thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/queue/journal.hpp"
#include "engine/queue/pending_queue.hpp"
#include "engine/queue/queue_compaction.hpp"
#include "engine/queue/queue_index.hpp"
#include "engine/queue/queue_stats.hpp"
#include "engine/queue/queue_tombstones.hpp"
#include "engine/store/artifact_store.hpp"

namespace handoff {

struct queue_change;  // one request to the writer (queue_change.hpp)

class queue_writer {
 public:
  using change_ptr = std::shared_ptr<queue_change>;
  struct parts {  // all outlive the writer
    std::mutex& mutex;  // the queue's; guards the index, the tombstones' memory, stats and ours
    queue_index& index;
    queue_tombstones& tombstones;
    handoff::journal& journal;
    artifact_store& texts;  // texts/: large texts saved, the spare kept
    int texts_fd;                 // texts/ again, to remove texts no record uses
    queue_stats& stats;
    queue_compaction& compaction;  // run after each group
    const queue_options& options;
  };
  // Called without the lock, on the thread that settled the first put of its key, for each put
  // that waited behind it: the queue admits it again (now a duplicate, a conflict, or new).
  using admit_again = std::function<void(change_ptr)>;

  // Starts the thread: everything in `p` must exist already.
  queue_writer(parts p, admit_again again);
  ~queue_writer();  // stop()
  queue_writer(const queue_writer&) = delete;
  queue_writer& operator=(const queue_writer&) = delete;

  // Writes what was handed over, then ends the thread; the parts must still be whole, since
  // answering a put may admit a resend again. Idempotent. Without the lock.
  void stop();

  // --- With the queue's mutex held.
  // Whether a put of `key` is being written (a resend is then not written ahead).
  bool in_flight(const std::string& key) const { return putting_.contains(key); }
  // When a put of its key is in flight, keeps `c` to admit again once that one is settled.
  bool wait_behind(const change_ptr& c);
  // Takes a put the queue admitted (its seq given, its entry encoded). True when the writer is
  // idle with nothing waiting: the caller must then let go of the lock and call write_alone(c).
  // Else it was submitted and its callback comes from the writer thread.
  bool take_put(const change_ptr& c);
  // Submits a blocking change (retire, delivery) and waits, letting go of the lock meanwhile,
  // until its group is settled.
  void write_and_wait(const change_ptr& c, std::unique_lock<std::mutex>& lock);

  // --- Without the lock.
  // Writes the put take_put() gave back on the caller's thread, as a group of one, and answers
  // it; its tidying (compaction, the spare file, zeros ahead) is left to the writer thread.
  void write_alone(change_ptr c) noexcept;

 private:
  void submit(change_ptr c);  // with the lock held
  void write_loop();
  void write_group(std::vector<change_ptr>& group);
  void apply(queue_change& c, std::uint64_t segment, std::size_t start);  // with the lock held
  void after_group(std::vector<change_ptr>& group);
  void write_done_files(const std::vector<queue_tombstones::keyed>& retired);
  // Stopping, or changes submitted and not yet taken by a group (takes the lock). The writer's
  // work between groups gives way to them.
  bool changes_waiting() const;
  // Between groups: opens an empty unnamed file in texts/ for the next large text when none is
  // held, so that its put need not create an inode first.
  void keep_spare_text();
  // After a group, when no change is waiting: journal::zero_ahead (queue_options).
  void keep_zeros_ahead();

  parts p_;
  admit_again admit_again_;
  std::condition_variable wake_writer_;
  std::condition_variable settled_;  // a blocking change finished
  bool stopping_ = false;
  bool writing_ = false;   // a group is being written (by the writer thread, or by write_alone)
  bool tidy_due_ = false;  // write_alone wrote a group: the writer thread compacts after it
  std::unordered_map<std::string, std::vector<change_ptr>> putting_;  // key -> puts waiting behind
  std::deque<change_ptr> submitted_;
  std::thread thread_;  // last: starts once everything above exists
};

}  // namespace handoff
