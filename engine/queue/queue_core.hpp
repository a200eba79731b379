// Inside the durable queue (pending_queue.hpp is its contract): the parts it is made of, and the
// one mutex that joins them. Private to the queue's sources.
//
//   queue_index       what is held, by key and seq, where it is, its texts, the deliveries, the
//                     segment counts: memory only (queue_index.hpp)
//   queue_tombstones  what left: done/ files and the few kept in memory (queue_tombstones.hpp)
//   journal           the segments (journal.hpp); texts_ the large texts (texts/)
//   the writer        below: the thread, the submitted changes, group commit, zeros ahead, the
//                     spare text file, compaction and copy-forward (queue_writer.cpp,
//                     queue_compaction.cpp)
//   recovery          below: replay of the journal into the index and the tombstones, legacy
//                     migration (queue_recovery.cpp, queue_legacy.cpp)
//   the calls         put, retire, deliveries, lookups (pending_queue.cpp)
//
// The locking rule, enforced here: mutex_ guards index_, the tombstones' memory and every member
// below it; the parts have no lock of their own. It is never held across disk I/O after
// recovery, with one exception: queue_tombstones::find() reads done/<key> under it when a put or
// a lookup asks about a key no memory knows, so that a resend is judged atomically with the put
// it races. The journal and done/ are written without it by the writer alone (or by a put
// written alone, while writing_ keeps the writer away); a large text is written ahead, unnamed,
// by its put's own thread (make_put), also without it. open_text() reads under it because a
// segment may not go while a text in it is read. recover() holds it throughout: nothing else
// runs before it returns.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/queue/journal.hpp"
#include "engine/queue/journal_entry.hpp"
#include "engine/queue/pending_queue.hpp"
#include "engine/queue/queue_files.hpp"
#include "engine/queue/queue_index.hpp"
#include "engine/queue/queue_tombstones.hpp"
#include "engine/store/artifact_store.hpp"

namespace handoff {

struct queue_change;  // one request to the writer (queue_change.hpp)

class queue_core {
 public:
  using put_outcome = pending_queue::put_outcome;
  using put_callback = pending_queue::put_callback;

  queue_core(std::filesystem::path dir, queue_options options);
  ~queue_core();  // finishes the changes already handed over, then stops the writer
  queue_core(const queue_core&) = delete;
  queue_core& operator=(const queue_core&) = delete;

  // pending_queue's calls, as it states them.
  pending_queue::recovered recover(std::vector<std::string>* problems);
  void put_async(const completion& c, std::string_view final_text, put_callback done);
  mapped_file open_text(const held_result& r) const;
  std::optional<std::filesystem::path> text_file(const held_result& r) const;
  std::optional<handoff::text_file> linkable_text(const held_result& r) const;
  std::vector<std::string> held_texts() const;
  bool holds_text(std::string_view sha256) const;
  void begin_delivery(const stored_delivery& d);
  std::vector<std::string> complete_delivery(std::string_view delivery_id);
  std::vector<std::string> consume(const std::vector<std::uint64_t>& seqs);
  bool was_delivered(std::string_view parent_id, std::string_view child_id) const;
  pending_queue::stats statistics() const;
  bool has_spare_text() const;
  std::size_t expire_tombstones(std::chrono::seconds age);
  std::vector<std::string> delivered_texts(std::int64_t since_unix_ms, std::vector<std::string>& problems) const;
  const std::filesystem::path& dir() const noexcept { return dir_; }
  const queue_options& options() const noexcept { return options_; }

 private:
  using change_ptr = std::shared_ptr<queue_change>;

  void require_recovered() const;
  void submit(change_ptr c);  // with mutex_ held
  change_ptr make_put(const completion& c, std::string_view text);
  bool known_already(const std::string& key) const;
  std::vector<std::string> retire_blocking(const std::vector<std::uint64_t>& seqs, std::string ack_id);

  // The writer (queue_writer.cpp)
  void write_loop();
  void write_alone(change_ptr c) noexcept;
  void write_group(std::vector<change_ptr>& group);
  void apply(queue_change& c, std::uint64_t segment, std::size_t start);  // with mutex_ held
  void after_group(std::vector<change_ptr>& group);
  void write_done_files(const std::vector<queue_tombstones::keyed>& retired);
  // Stopping, or changes submitted and not yet taken by a group (takes the lock). The writer's
  // work between groups gives way to them.
  bool changes_waiting() const;
  // The writer, between groups: opens an empty unnamed file in texts/ for the next large text
  // when none is held, so that its put need not create an inode first.
  void keep_spare_text();
  // After a group, when no change is waiting: journal::zero_ahead (queue_options).
  void keep_zeros_ahead();
  // Compaction, the writer's after each group (queue_compaction.cpp)
  void compact();
  bool write_mark();
  bool refile_tombstones();
  void copy_forward(std::uint64_t segment);

  // recover()'s steps (queue_recovery.cpp, queue_legacy.cpp)
  struct replay_state;
  void replay(std::vector<std::string>& notes, std::uint64_t& max_seq);
  void replay_segment(std::uint64_t segment, bool last, replay_state& state);
  bool replay_entry(const decoded_entry& e, std::string_view bytes, std::uint64_t segment, const std::string& shown,
                    replay_state& state);
  bool replay_put(decoded_put p, const decoded_entry& e, std::string_view bytes, std::uint64_t segment,
                  const std::string& shown, replay_state& state);
  std::optional<text_shape> check_text_file(const std::string& sha, std::vector<std::string>& notes);
  void settle_tombstones(replay_state& state);
  void settle_texts(std::vector<std::string>& notes);
  void migrate_legacy(std::vector<std::string>& notes, std::uint64_t& max_seq);

  void publish_stats() noexcept;  // with mutex_ held

  std::filesystem::path dir_;
  queue_options options_;
  unique_fd dir_fd_;
  unique_fd lock_fd_;           // "lock": flock held for the queue's life, one process per queue
  artifact_store texts_;        // texts/: content-addressed, verified, never overwritten
  unique_fd texts_fd_;          // texts/ again, to list and remove texts no record uses
  queue_tombstones tombstones_;  // done/; its memory under mutex_
  journal journal_;             // the writer's alone once recovered

  mutable std::mutex mutex_;  // the locking rule above
  queue_index index_;
  std::condition_variable wake_writer_;
  std::condition_variable settled_;  // a blocking change finished
  bool recovered_ = false;
  bool stopping_ = false;
  bool writing_ = false;   // a group is being written (by the writer thread, or by write_alone)
  bool tidy_due_ = false;  // write_alone wrote a group: the writer thread compacts after it
  std::uint64_t next_seq_ = 1;
  std::size_t journal_bytes_ = 0;  // as the writer last saw it
  std::unordered_map<std::string, std::vector<change_ptr>> putting_;  // key -> puts in flight
  std::deque<change_ptr> submitted_;
  bool mark_missing_ = false;  // the active segment has no mark yet (write_mark failed); the writer's
  std::size_t groups_ = 0;
  std::size_t changes_ = 0;

  mutable std::mutex stats_mutex_;  // guards snapshot_ only; never held across I/O
  pending_queue::stats snapshot_;
  std::thread writer_;  // last: starts once everything above exists
};

}  // namespace handoff
