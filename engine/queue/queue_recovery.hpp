// Reading what a previous run left back into the queue's memory (docs/design.md §8,
// "Recovery"). Private to the queue's sources.
//
// Owns: the replay's own state while it runs (the retirements the journal lists, the text files
// it checked, the puts whose text file is missing), judged once the whole journal is read; and
// the migration of a queue written before the journal (records/, deliveries/:
// queue_legacy.cpp).
// Locking: none of its own. run() is called once, by pending_queue::recover(), with the queue's
// mutex held throughout and before the writer takes any change (queue_parts.hpp): it is the one
// part allowed disk I/O under that mutex, since nothing else may run before it returns.
// Guarantees, when run() returns:
//   - the index holds every completion the journal (or a legacy record) holds whose text checks
//     out and whose tombstone is not in done/; the deliveries keep only results still held;
//   - a torn tail is cut off its segment, a damaged entry ends its segment, a put whose text
//     does not hash is dropped; texts and temp files nothing uses are removed; done/ has a file
//     for every retirement the journal lists that has not expired;
//   - the journal is ready to append (journal::start_appending);
//   - every removal, cut and drop is a line in `notes`.
// Throws fs_error when the disk refuses what recovery must do (the caller's queue_error).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/queue/journal.hpp"
#include "engine/queue/journal_entry.hpp"
#include "engine/queue/queue_files.hpp"
#include "engine/queue/queue_index.hpp"
#include "engine/queue/queue_tombstones.hpp"
#include "engine/store/artifact_store.hpp"

namespace handoff {

class queue_recovery {
 public:
  struct parts {  // all outlive the recovery
    int queue_fd;                       // the queue directory, held open by the queue
    const std::filesystem::path& dir;   // its path, for messages and legacy areas
    queue_index& index;
    queue_tombstones& tombstones;
    handoff::journal& journal;
    const artifact_store& texts;        // texts/
    int texts_fd;                       // texts/ again, to list and remove
  };
  explicit queue_recovery(parts p) : p_(p) {}

  // Recovers (see above); returns the largest seq seen anywhere (0 for an empty queue).
  std::uint64_t run(std::vector<std::string>& notes);

 private:
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
  void migrate_legacy(std::vector<std::string>& notes, std::uint64_t& max_seq);  // queue_legacy.cpp

  parts p_;
};

}  // namespace handoff
