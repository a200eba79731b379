// What is left of the results that left the queue (pending_queue.hpp): a tombstone per result
// in done/<key>, so that a resend is recognised without holding them all in memory. Memory keeps
// their count, those whose file is not written yet, and those the disk refused. Private to the
// queue's sources.
//
// A retired result's tombstone is, in turn:
//   recent     retired in memory, its group (and then its file) not written yet
//   unwritten  its retire entry was refused by the disk: the result stays in the journal and is
//              delivered again after a restart; kept until the daemon stops or it expires
//   unfiled    its retire entry is on disk, its done/ file was refused: retried (refile) before
//              any segment goes, since the journal is then its only record
//   a file     done/<key>, counted
//
// No lock of its own. The memory calls are made with the queue's mutex held (queue_parts.hpp);
// find() also reads done/<key> there (a resend is judged under the same lock as the put it
// races). The file calls are made without it: only the writer (or recovery, before the writer
// takes changes) writes done/; expiry only removes files too old for the writer to be writing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/fs/posix_io.hpp"
#include "engine/queue/queue_records.hpp"

namespace handoff {

class queue_tombstones {
 public:
  using keyed = std::pair<std::string, tombstone>;  // (completion key, tombstone)

  // <queue>/<expired_file>: the time (ms) up to which tombstones were expired.
  static constexpr std::string_view expired_file = "tombstones-expired-before";

  // Opens (creating, 0700, ours, no symlink) done/ in the queue directory open at `queue_fd`.
  queue_tombstones(int queue_fd, std::filesystem::path queue_dir);

  // --- Memory, with the queue's mutex held.
  // Memory first, then done/<key> (read: a tombstone that cannot be decoded counts as none).
  std::optional<tombstone> find(const std::string& key) const;
  void retiring(const std::string& key, const tombstone& t);        // recent
  void retire_refused(const std::string& key, const tombstone& t);  // recent -> unwritten
  // write_files() came back: `written` more files; `refused` become unfiled; `retired` stop
  // being recent (only now: until its file or refusal is there, memory recognises a resend).
  void filed(const std::vector<keyed>& retired, std::size_t written, const std::vector<keyed>& refused);
  std::vector<keyed> unfiled() const;
  // refile_unfiled's writes came back: those of `again` not in `refused` are files now. True
  // when no tombstone is left in memory only.
  bool refiled(const std::vector<keyed>& again, std::size_t written, const std::vector<keyed>& refused);
  bool all_filed() const noexcept { return unfiled_.empty(); }
  std::size_t count() const noexcept;  // files, recent, unwritten and unfiled
  void append_recent_texts(std::vector<std::string>& out) const;
  bool recent_text(std::string_view sha256) const;
  // Forgets unwritten tombstones that left at or before `cutoff_ms`; returns how many.
  std::size_t expire_unwritten(std::int64_t cutoff_ms);
  // expire's files are removed (`removed_files` of them) up to `cutoff_ms`.
  void expired(std::int64_t cutoff_ms, std::size_t removed_files);

  // --- done/ files, without the queue's mutex.
  // Writes done/<key> for each, unsynced (an index the journal can rebuild); those the disk
  // refused go to `refused` (why, when asked, to `why`). Returns how many were written. The
  // writer's, or recovery's.
  std::size_t write_files(const std::vector<keyed>& retired, std::vector<keyed>& refused,
                          std::vector<std::string>* why);
  // Syncs the files written since the last call: before a segment holding their retire entries
  // goes. The writer's, or recovery's.
  void sync_files();
  // Removes done/ files that left at or before `cutoff_ms`, then records the cutoff in
  // <queue>/<expired_file> (best effort), so recovery does not write them again. Returns how
  // many files went. Any thread.
  std::size_t remove_files_up_to(std::int64_t cutoff_ms);
  // The sha256 of every tombstone in done/ that left at or after `since_unix_ms`, read anew (see
  // pending_queue::delivered_texts). Any thread.
  std::vector<std::string> delivered_texts(std::int64_t since_unix_ms, std::vector<std::string>& problems) const;

  // --- Recovery, before the writer takes changes.
  // Counts done/'s files (removing temp files a crash left; strangers are noted, left alone).
  void count_files(std::vector<std::string>& notes);
  bool has_file(const std::string& key) const;
  bool lacks_file(const std::string& key) const;  // known absent (not just unreadable)
  // Reads <queue>/<expired_file>: tombstones up to that time are not to be written again.
  std::int64_t load_expiry();
  // Files (or keeps unfiled) the tombstones the journal has and done/ lacks, then syncs them.
  void refile_from_journal(const std::vector<keyed>& missing, std::vector<std::string>& notes);

 private:
  std::filesystem::path queue_dir_;
  int queue_fd_ = -1;  // the queue's, held open by it
  unique_fd done_fd_;
  std::size_t files_ = 0;
  std::unordered_map<std::string, tombstone> recent_;     // key -> retired, file not yet written
  std::unordered_map<std::string, tombstone> unwritten_;  // key -> retire entry refused by the disk
  std::unordered_map<std::string, tombstone> unfiled_;    // key -> done/ file refused (retried)
  std::int64_t expired_before_ms_ = 0;                    // up to this time were expired (expired_file)
  std::vector<std::string> unsynced_;                     // done/ files written, not yet fsynced
};

}  // namespace handoff
