// The durable queue (docs/design.md §8): every acknowledged completion is on disk before the
// daemon answers, and leaves only when its delivery was confirmed.
//
// Layout under the queue directory (0700, ours, opened with O_NOFOLLOW like the store):
//   journal/<16 hex>.log   what happened, as entries appended in groups (journal_entry.hpp):
//                          completions taken (with their text inline when it is under
//                          file_text_bytes), results retired, deliveries sent and acknowledged
//   texts/<sha256>.txt     final texts of file_text_bytes or more, content-addressed, shared
//   done/<key>             tombstones of delivered/consumed results, one small file each, so
//                          a resend is recognised without holding them all in memory
//
// Group commit: every change is handed to one writer thread, which writes everything that
// arrived while it was busy as one group (one write and one fdatasync of the journal, plus an
// fsync per large text) and then answers each change; a put that finds the writer idle, with
// nothing waiting, is written the same way by the thread that called put_async (a group of
// one, without a thread hand-off). put_async() answers through a callback; the other changing
// calls block until their group is on disk. A journal replaces a file per record because one
// sync per group is what makes eight concurrent completions cheaper than eight fsyncs; see
// docs/design.md §8 for why, and how recovery stays strict.
// Thread-safe. Calls that block on the disk are made from the daemon's worker pool.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/store/artifact_store.hpp"
#include "engine/queue/journal.hpp"
#include "engine/queue/journal_entry.hpp"
#include "engine/fs/mapped_file.hpp"
#include "engine/fs/posix_io.hpp"
#include "engine/queue/queue_files.hpp"
#include "engine/queue/queue_records.hpp"
#include "engine/fs/text_file.hpp"

namespace handoff {

// Thrown when the disk refuses a write: the completion must NOT be acknowledged.
struct queue_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Thrown by put() when the same parent+child was already held with a different final text.
struct queue_conflict : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct queue_options {
  // Texts of at least this many bytes are kept as their own file (texts/), written and fsynced
  // in the group; smaller ones go inline in the journal. Default 1 MiB: a file costs its
  // completion a second commit (the file and its name, then the journal), which the copy of
  // an inline text into the artifact store at the wait never made up for in any size measured
  // up to 1 MiB (docs/benchmarks.md: 256 KiB 2.8-2.9 ms inline against 3.4-4.1 ms as a file,
  // completed + wait); a file keeps the largest texts out of the journal, where compaction
  // would copy them forward, and lets their artifact be a hard link instead of a copy.
  std::size_t file_text_bytes = 1024 * 1024;
  // A segment at least this large is sealed and a new one started. Default 64 MiB.
  std::size_t segment_bytes = 64 * 1024 * 1024;
  // Most bytes written as one group (a larger single change is a group of its own).
  std::size_t group_bytes = 32 * 1024 * 1024;
  // The writer keeps the active segment written with zeros this far past its entries
  // (journal::zero_ahead), after a group when no change is waiting, so that the next groups'
  // fdatasync writes their data alone. Default 2 MiB, refilled when under 1 MiB is left; 0:
  // every group extends the file.
  std::size_t zero_ahead_bytes = 2 * 1024 * 1024;
};

class pending_queue {
 public:
  // <queue>/<expired_file>: the time (ms) up to which tombstones were expired.
  static constexpr std::string_view expired_file = "tombstones-expired-before";
  // open_text() reads a journal text of at most this many bytes into memory and maps a larger
  // one (so that a batch of many large texts costs page cache, not the daemon's heap).
  static constexpr std::size_t read_text_bytes = 256 * 1024;

  // Opens or creates the queue at absolute `dir` (0700, ours; else std::runtime_error) and
  // locks it (<dir>/lock) for the object's life; a queue another object or process holds
  // throws std::runtime_error.
  explicit pending_queue(std::filesystem::path dir, queue_options options = {});
  ~pending_queue();  // finishes the changes already handed over, then stops the writer
  pending_queue(const pending_queue&) = delete;
  pending_queue& operator=(const pending_queue&) = delete;

  struct recovered {
    std::vector<held_result> results;        // every held completion, by seq
    std::vector<stored_delivery> deliveries; // every unacknowledged delivery
  };
  // Loads what a previous run left: replays the journal, cuts a torn tail (the group a crash
  // interrupted, never acknowledged), drops completions whose text is missing or does not hash
  // to its name, and texts and temp files nothing uses; each in `problems`. Call once, before
  // any other call.
  recovered recover(std::vector<std::string>* problems = nullptr);

  struct put_outcome {
    held_result held;
    bool duplicate = false;  // the same parent+child and text were already held or delivered
    bool delivered = false;  // duplicate of a result that already left the queue: held.seq is
                             // its old seq and nothing is held for it any more
  };
  // Makes the completion durable and calls `done` (on the writer thread; or on the caller's
  // when it is answered at once, a duplicate, a conflict, a refusal, or when the writer was idle
  // and the caller wrote it, blocking for the write and its sync) with the outcome or the
  // exception: queue_conflict for the same key with another text, queue_error when the disk
  // failed (nothing of it is left), std::invalid_argument when an id, title or error is not
  // valid UTF-8 or the record would exceed max_entry_meta_bytes. `final_text` must stay alive
  // until `done` is called. `done` must not call back into the queue.
  using put_callback = std::function<void(std::exception_ptr, put_outcome)>;
  void put_async(const completion& c, std::string_view final_text, put_callback done);
  // The same, blocking until the group is on disk; throws what put_async would report.
  put_outcome put(const completion& c, std::string_view final_text);

  // Maps a held result's text read-only. Throws queue_error when it is no longer held.
  mapped_file open_text(const held_result& r) const;
  // The file a held result's text is kept in (texts/<sha256>.txt), when it is one; nullopt for
  // a text kept inline in the journal.
  std::optional<std::filesystem::path> text_file(const held_result& r) const;
  // The same as a directory fd the queue holds and a name, for the artifact store to hard-link
  // (artifact_store::save); the fd stays valid as long as the queue.
  std::optional<handoff::text_file> linkable_text(const held_result& r) const;
  // The sha256 of every held result's text, and of results leaving whose tombstone file is not
  // written yet (for the artifact store's garbage collection).
  std::vector<std::string> held_texts() const;
  bool holds_text(std::string_view sha256) const;

  // Records an auto-delivery before it is sent (throws queue_error).
  void begin_delivery(const stored_delivery& d);
  // The parent acknowledged the delivery: its results leave the queue (as tombstones). An
  // unknown id is ignored (a repeated acknowledgement).
  // These two never throw for disk trouble: the results leave memory regardless, and what the
  // disk refused comes back as plain words for the caller to log (empty when all went well).
  // A result whose retirement could not be written stays in the journal, so after a restart it
  // is delivered again: at least once, never lost.
  std::vector<std::string> complete_delivery(std::string_view delivery_id);
  // Results consumed by a wait or a cancel leave the queue (as tombstones). Unknown seqs are
  // ignored.
  std::vector<std::string> consume(const std::vector<std::uint64_t>& seqs);

  // Whether this child's result left the queue (delivered, consumed or cancelled) and its
  // tombstone is still kept: how the daemon tells a child it forgot from one it never knew.
  bool was_delivered(std::string_view parent_id, std::string_view child_id) const;

  struct stats {
    std::size_t results = 0;      // held completions
    std::size_t text_bytes = 0;   // bytes of their texts (shared texts counted once)
    std::size_t deliveries = 0;   // unacknowledged deliveries
    std::size_t tombstones = 0;
    std::size_t journal_bytes = 0;
    std::size_t groups = 0;       // groups written since the start
    std::size_t changes = 0;      // changes those groups carried
  };
  // A snapshot taken after the last change: never waits for a write in progress (so the I/O
  // thread may call it), and may lag a change being made right now.
  stats statistics() const;
  // True while an unnamed file is open and ready for the next large text (the writer opens one
  // after each group it writes, when nothing waits; a put that finds none opens its own).
  bool has_spare_text() const;

  // Forgets tombstones older than `age` (resends after that are treated as new). Reads done/.
  std::size_t expire_tombstones(std::chrono::seconds age);
  // The sha256 of every result whose tombstone in done/ says it left at or after
  // `since_unix_ms` (for the artifact store's garbage collection: its parent may still page the
  // artifact). Reads done/ as it is on disk, opened anew without following a symlink; a
  // tombstone that cannot be decoded is skipped with a line in `problems`. Blocking.
  std::vector<std::string> delivered_texts(std::int64_t since_unix_ms, std::vector<std::string>& problems) const;

  const std::filesystem::path& dir() const noexcept { return dir_; }
  const queue_options& options() const noexcept { return options_; }

 private:
  struct change;       // one request to the writer (pending_queue.cpp)
  struct location {    // where a held result's put entry and text are
    std::uint64_t segment = 0;
    std::size_t text_offset = 0;  // in the segment, when the text is in the journal
    text_place place = text_place::in_journal;
  };
  struct entry {
    held_result held;
    location where;
  };
  struct text_ref {
    std::size_t uses = 0;
    std::size_t bytes = 0;
  };

  void require_recovered() const;
  const entry* find_held(std::uint64_t seq) const;  // with mutex_ held; nullptr when not held
  void submit(std::shared_ptr<change> c);
  void write_loop();
  void write_alone(std::shared_ptr<change> c) noexcept;
  void write_group(std::vector<std::shared_ptr<change>>& group);
  void apply(change& c, std::uint64_t segment, std::size_t base);  // with mutex_ held
  void after_group(std::vector<std::shared_ptr<change>>& group);
  // Stopping, or changes submitted and not yet taken by a group (takes the lock). The writer's
  // work between groups gives way to them.
  bool changes_waiting() const;
  // The writer, between groups: opens an empty unnamed file in texts/ for the next large text
  // when none is held, so that its put need not create an inode first.
  void keep_spare_text();
  // After a group, when no change is waiting: journal::zero_ahead (queue_options).
  void keep_zeros_ahead();
  bool known_already(const std::string& key) const;
  void compact();
  bool write_mark();
  bool refile_tombstones();
  void copy_forward(std::uint64_t segment);
  std::vector<std::string> retire_blocking(const std::vector<std::uint64_t>& seqs, std::string ack_id);
  std::shared_ptr<change> make_put(const completion& c, std::string_view text);
  // recover()'s steps (queue_recovery.cpp)
  struct replay_state {
    std::vector<std::string>& notes;
    std::uint64_t& max_seq;
    std::unordered_map<std::string, tombstone> retired;                // key -> as the journal says
    std::unordered_map<std::string, std::optional<text_shape>> files;  // sha256 -> checked text file
    std::unordered_map<std::uint64_t, std::string> textless;           // seq -> its put, text file missing
  };
  void replay(std::vector<std::string>& notes, std::uint64_t& max_seq);
  void replay_segment(std::uint64_t segment, bool last, replay_state& state);
  // False for a put whose text in the journal does not match its hash (the caller decides
  // between a torn tail and a dropped completion); true for anything else, noted or not.
  bool replay_entry(const decoded_entry& e, std::string_view bytes, std::uint64_t segment,
                    const std::string& shown, replay_state& state);
  bool replay_put(decoded_put p, const decoded_entry& e, std::string_view bytes, std::uint64_t segment,
                  const std::string& shown, replay_state& state);
  std::optional<text_shape> check_text_file(const std::string& sha, std::vector<std::string>& notes);
  void settle_tombstones(replay_state& state);
  void settle_texts(std::vector<std::string>& notes);
  void count_live();
  void migrate_legacy(std::vector<std::string>& notes, std::uint64_t& max_seq);  // queue_legacy.cpp
  void count_tombstones(std::vector<std::string>& notes);

  void add_text_use(const std::string& sha, std::size_t bytes);
  bool drop_text_use(const std::string& sha);  // true when it was the last use
  std::optional<tombstone> find_tombstone(const std::string& key) const;  // with mutex_ held
  void write_done_files(const std::vector<std::pair<std::string, tombstone>>& retired);
  std::size_t file_tombstones(const std::vector<std::pair<std::string, tombstone>>& retired,
                              std::vector<std::pair<std::string, tombstone>>& refused, std::vector<std::string>* why);
  void sync_done_files();
  void publish_stats() noexcept;  // with mutex_ held
  struct publish_on_exit {
    pending_queue& q;
    ~publish_on_exit() { q.publish_stats(); }
  };

  std::filesystem::path dir_;
  queue_options options_;
  unique_fd dir_fd_;
  unique_fd lock_fd_;         // "lock": flock held for the queue's life, one process per queue
  artifact_store texts_;      // texts/: content-addressed, verified, never overwritten
  unique_fd texts_fd_;        // texts/ again, to list and remove texts no record uses
  unique_fd done_fd_;         // done/
  journal journal_;           // the writer's alone once recovered

  mutable std::mutex mutex_;  // guards everything below (never held across disk I/O after recovery)
  std::condition_variable wake_writer_;
  std::condition_variable settled_;  // a blocking change finished
  bool recovered_ = false;
  bool stopping_ = false;
  bool writing_ = false;   // a group is being written (by the writer thread, or by write_alone)
  bool tidy_due_ = false;  // write_alone wrote a group: the writer thread compacts after it
  std::uint64_t next_seq_ = 1;
  std::unordered_map<std::string, entry> by_key_;              // key -> held
  std::unordered_map<std::uint64_t, std::string> key_by_seq_;  // seq -> key
  std::unordered_map<std::string, text_ref> text_refs_;       // sha256 -> held results using it
  std::unordered_map<std::string, std::pair<stored_delivery, std::uint64_t>> deliveries_;  // id -> (delivery, segment)
  std::unordered_map<std::uint64_t, std::size_t> live_;        // segment -> entries still needed
  std::unordered_map<std::uint64_t, std::size_t> stuck_;       // segment -> retirements the disk refused
  std::size_t text_bytes_ = 0;    // sum of text_refs_ bytes
  std::size_t journal_bytes_ = 0;  // as the writer last saw it
  std::unordered_map<std::string, std::vector<std::shared_ptr<change>>> putting_;  // key -> puts in flight
  std::deque<std::shared_ptr<change>> submitted_;
  // Tombstones are files in done/, not memory: a daemon that runs for months delivers far more
  // results than it should hold. Memory keeps their count, those being written, and those the
  // disk refused (kept until the daemon stops; their results are delivered again after a restart).
  std::size_t tombstone_count_ = 0;
  std::unordered_map<std::string, tombstone> recent_tombstones_;  // key -> retired, file not yet written
  std::unordered_map<std::string, tombstone> unwritten_tombstones_;  // key -> retire entry refused by the disk
  std::unordered_map<std::string, tombstone> unfiled_tombstones_;    // key -> done/ file refused (retried)
  bool mark_missing_ = false;  // the active segment has no mark yet (write_mark failed)
  std::int64_t expired_before_ms_ = 0;  // tombstones up to this time were expired (expired_file)
  std::vector<std::string> unsynced_done_;  // done/ files written, not yet fsynced
  std::size_t groups_ = 0;
  std::size_t changes_ = 0;

  mutable std::mutex stats_mutex_;  // guards snapshot_ only; never held across I/O
  stats snapshot_;
  std::thread writer_;  // last: starts once everything above exists
};

}  // namespace handoff
