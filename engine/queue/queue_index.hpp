// The queue's memory of what it holds (pending_queue.hpp): held results by key and by seq, where
// each one's entry and text are, the texts they use, the unacknowledged deliveries, and how many
// entries each journal segment still has that the journal needs. No I/O and no lock of its own:
// the queue's mutex guards it (queue_parts.hpp). Private to the queue's sources.
//
// live(s) counts the entries of segment s the journal still needs: a held result's put, an
// unacknowledged delivery, and a result released (or a delivery ended) whose retirement is not on
// disk yet (left() or refused() settles it once its group is written). stuck(s) counts the
// retirements from segment s the disk refused. A segment goes only when both are 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/queue/queue_files.hpp"
#include "engine/queue/queue_records.hpp"

namespace handoff {

class queue_index {
 public:
  struct location {  // where a held result's put entry and text are
    std::uint64_t segment = 0;
    std::size_t text_offset = 0;  // in the segment, when the text is in the journal
    text_place place = text_place::in_journal;
  };
  struct entry {
    held_result held;
    location where;
  };
  struct released {  // what release() took out
    std::string key;
    entry e;
  };

  // Holds `e` under `key` (replacing what was held under it: a copy moved forward, or a
  // migrated record), counted in its segment, its text used once more.
  void hold(const std::string& key, entry e);
  const entry* find(const std::string& key) const;  // nullptr when not held
  const entry* find(std::uint64_t seq) const;
  const std::string* key_of(std::uint64_t seq) const;
  bool holds(const std::string& key) const { return by_key_.contains(key); }
  // Lets go of a held result at once (nothing can consume it twice); its segment count and its
  // text use stay until its retirement is written: left() and drop_text_use(), or refused().
  std::optional<released> release(std::uint64_t seq);
  // Release and settle at once (recovery: nothing is written for it).
  void drop(std::uint64_t seq);
  // The retirement of an entry of `segment` is on disk: one fewer needed there.
  void left(std::uint64_t segment);
  // The disk refused a retirement of an entry of `segment`: it stays in the journal (and is
  // delivered again after a restart), so the segment must stay as long as the daemon runs.
  void refused(std::uint64_t segment);
  // True when the last held result using `sha256` let it go.
  bool drop_text_use(const std::string& sha256);

  // Records an unacknowledged delivery whose entry is in `segment` (replacing one of that id).
  void add_delivery(stored_delivery d, std::uint64_t segment);
  const stored_delivery* delivery(const std::string& id) const;
  // Ends a delivery; returns the segment of its entry (still counted there, as release()).
  std::optional<std::uint64_t> end_delivery(const std::string& id);
  // Forgets the seqs of deliveries no longer held, and deliveries left with none.
  void prune_deliveries();

  bool uses_text(const std::string& sha256) const { return text_refs_.contains(sha256); }
  void append_texts(std::vector<std::string>& out) const;  // every sha256 in use, once each
  std::vector<std::string> file_texts() const;  // sha256 of texts kept in texts/, once per result

  std::size_t live(std::uint64_t segment) const;
  std::size_t stuck(std::uint64_t segment) const;
  // When segment s has nothing needed and nothing stuck: forgets its counts and returns true.
  bool forget_segment(std::uint64_t segment);
  // Moves a held result's entry to `segment` at `text_offset` (copied forward); false when it is
  // no longer held as `seq` (retired meanwhile).
  bool move(const std::string& key, std::uint64_t seq, std::uint64_t segment, std::size_t text_offset);
  bool move_delivery(const std::string& id, std::uint64_t segment);

  // Visits (key, entry) of each held result, or (id, delivery, segment) of each delivery.
  template <class F>
  void each_held(F&& f) const {
    for (const auto& [key, e] : by_key_) f(key, e);
  }
  template <class F>
  void each_delivery(F&& f) const {
    for (const auto& [id, d] : deliveries_) f(id, d.first, d.second);
  }
  std::vector<std::string> keys() const;
  std::vector<held_result> results_by_seq() const;
  std::vector<stored_delivery> deliveries_in_order() const;  // as sent, as near as seqs tell

  std::size_t results() const noexcept { return by_key_.size(); }
  std::size_t deliveries() const noexcept { return deliveries_.size(); }
  std::size_t text_bytes() const noexcept { return text_bytes_; }  // shared texts counted once

 private:
  struct text_ref {
    std::size_t uses = 0;
    std::size_t bytes = 0;
  };
  void add_text_use(const std::string& sha256, std::size_t bytes);

  std::unordered_map<std::string, entry> by_key_;              // key -> held
  std::unordered_map<std::uint64_t, std::string> key_by_seq_;  // seq -> key
  std::unordered_map<std::string, text_ref> text_refs_;        // sha256 -> held results using it
  std::unordered_map<std::string, std::pair<stored_delivery, std::uint64_t>> deliveries_;  // id -> (delivery, segment)
  std::unordered_map<std::uint64_t, std::size_t> live_;   // segment -> entries still needed
  std::unordered_map<std::uint64_t, std::size_t> stuck_;  // segment -> retirements the disk refused
  std::size_t text_bytes_ = 0;                            // sum of text_refs_ bytes
};

}  // namespace handoff
