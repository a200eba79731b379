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
//
// The contract, in short:
//   - recover() comes first, once; every other call before it throws std::logic_error.
//   - A put is durable when its callback is called without an error: its entry (and its text,
//     inline or as texts/<sha256>.txt) was synced. A result leaves only through consume() or
//     complete_delivery(); after a crash it is delivered again unless its retirement was synced.
//   - A duplicate is the same parent+child with the same text: answered with what is held (or,
//     once delivered, with the old seq), never stored twice; another text is a queue_conflict.
//   - Thread-safe: any call from any thread. Calls that block on the disk are made from the
//     daemon's worker pool; statistics() never blocks on the disk.
// The parts inside (index, tombstones, journal, writer, compaction, recovery, stats), the rules
// across them and the locking rule are queue_parts.hpp's.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/fs/mapped_file.hpp"
#include "engine/fs/text_file.hpp"
#include "engine/queue/queue_records.hpp"

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
  // up to 1 MiB (completed + wait, docs/benchmarks.md); a file keeps the largest texts out of
  // the journal, where compaction would copy them forward, and lets their artifact be a hard
  // link instead of a copy.
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

struct queue_parts;

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
  // thread may call it), and may lag a change being made right now. queue_stats' alone.
  stats statistics() const;
  // True while an unnamed file is open and ready for the next large text (the writer opens one
  // after each group it writes, when nothing waits; a put that finds none opens its own). The
  // text store's alone (artifact_store::has_spare), kept by queue_writer.
  bool has_spare_text() const;

  // Forgets tombstones older than `age` (resends after that are treated as new). Reads done/.
  std::size_t expire_tombstones(std::chrono::seconds age);
  // The sha256 of every result whose tombstone in done/ says it left at or after
  // `since_unix_ms` (for the artifact store's garbage collection: its parent may still page the
  // artifact). Reads done/ as it is on disk, opened anew without following a symlink; a
  // tombstone that cannot be decoded is skipped with a line in `problems`. Blocking. The
  // tombstones' alone (queue_tombstones::delivered_texts), without the queue's lock.
  std::vector<std::string> delivered_texts(std::int64_t since_unix_ms, std::vector<std::string>& problems) const;

  const std::filesystem::path& dir() const noexcept;
  const queue_options& options() const noexcept;

 private:
  std::unique_ptr<queue_parts> parts_;  // the parts (queue_parts.hpp)
};

}  // namespace handoff
