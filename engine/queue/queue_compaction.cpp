// The writer's work after each group: the active segment rotates when full, older segments go
// once nothing in them is needed, and what is still needed in a mostly dead one is copied
// forward. Runs on the writer thread only; memory is read and changed under mutex_, the journal
// without it.
#include <string>
#include <vector>

#include "engine/queue/journal_entry.hpp"
#include "engine/queue/queue_core.hpp"

namespace handoff {

// Segments go oldest first, and only when nothing in them is needed: a retire entry is never
// dropped while the put it retires may still be replayed. When the active segment is full a new
// one starts, and what is still needed in older sealed segments is copied forward.
void queue_core::compact() {
  bool rotated = false;
  try {
    rotated = journal_.rotate_if_over(options_.segment_bytes);
  } catch (const fs_error&) {
    return;  // the old segment stays active; tried again after the next group
  }
  // No older segment goes before the new one has its mark, nor while a tombstone file the disk
  // refused exists only in memory (its retire entry would go with the segment).
  if ((rotated || mark_missing_) && !write_mark()) return;
  if (!refile_tombstones()) return;
  const std::vector<std::uint64_t> segments = journal_.segments();
  if (rotated && segments.size() >= 3) {
    for (std::size_t i = 0; i + 2 < segments.size(); ++i) copy_forward(segments[i]);
  }
  for (const std::uint64_t s : journal_.segments()) {
    if (s == journal_.active()) break;
    {
      std::lock_guard lock(mutex_);
      if (!index_.forget_segment(s)) break;
    }
    tombstones_.sync_files();
    try {
      journal_.remove(s);
    } catch (const fs_error&) {
      break;  // tried again after the next group
    }
  }
  std::lock_guard lock(mutex_);
  journal_bytes_ = journal_.total_bytes();
  publish_stats();
}

// A new segment starts with the next seq: once the older segments are gone, it is what keeps
// seqs increasing across a restart. False when it could not be written.
bool queue_core::write_mark() {
  std::uint64_t next = 0;
  {
    std::lock_guard lock(mutex_);
    next = next_seq_;
  }
  const std::string head = encode_entry_head(entry_kind::mark, encode_mark(next), 0);
  try {
    journal_.append({journal_piece(head)});
    mark_missing_ = false;
  } catch (const fs_error&) {
    mark_missing_ = true;
  }
  return !mark_missing_;
}

// Tries again the tombstone files the disk refused; true when none is left in memory only.
bool queue_core::refile_tombstones() {
  std::vector<queue_tombstones::keyed> again;
  {
    std::lock_guard lock(mutex_);
    if (tombstones_.all_filed()) return true;
    again = tombstones_.unfiled();
  }
  // Each stays listed until its file is there: while the files are written (slow on a busy or
  // full disk) a resend must still be recognised, or it would be queued and delivered again.
  std::vector<queue_tombstones::keyed> refused;
  const std::size_t written = tombstones_.write_files(again, refused, nullptr);
  std::lock_guard lock(mutex_);
  return tombstones_.refiled(again, written, refused);
}

// Re-appends what is still held or unacknowledged in `segment` to the active one, so the old
// segment can go; only when at most a quarter of it is still held.
void queue_core::copy_forward(std::uint64_t segment) {
  struct moved_put {
    std::string key;
    std::uint64_t seq;
    mapped_file text;
  };
  std::vector<moved_put> puts;
  std::vector<std::string> delivery_ids;
  std::vector<std::string> heads;
  {
    std::lock_guard lock(mutex_);
    if (index_.stuck(segment) != 0 || index_.live(segment) == 0) return;
    // Worth it only when most of the segment is dead: copying a segment that is mostly still
    // held would only write the same bytes again (and again at the next rotation).
    std::size_t live_bytes = 0;
    index_.each_held([&](const std::string&, const queue_index::entry& e) {
      if (e.where.segment == segment) live_bytes += e.held.shape.bytes + entry_header_bytes;
    });
    if (live_bytes * 4 > journal_.segment_size(segment)) return;
    index_.each_held([&](const std::string& key, const queue_index::entry& e) {
      if (e.where.segment != segment) return;
      mapped_file text;
      if (e.where.place == text_place::in_journal)
        text = mapped_file(journal_.segment_fd(segment), e.where.text_offset, e.held.shape.bytes);
      heads.push_back(encode_entry_head(entry_kind::put, encode_put(e.held, e.where.place), text.view().size()));
      puts.push_back({key, e.held.seq, std::move(text)});
    });
    index_.each_delivery([&](const std::string& id, const stored_delivery& d, std::uint64_t in) {
      if (in != segment) return;
      heads.push_back(encode_entry_head(entry_kind::delivery, encode_delivery(d), 0));
      delivery_ids.push_back(id);
    });
  }
  std::vector<iovec> pieces;
  std::vector<std::size_t> text_at;
  std::size_t at = 0;
  for (std::size_t i = 0; i < heads.size(); ++i) {
    pieces.push_back(journal_piece(heads[i]));
    at += heads[i].size();
    if (i < puts.size()) {
      text_at.push_back(at);
      if (!puts[i].text.view().empty()) pieces.push_back(journal_piece(puts[i].text.view()));
      at += puts[i].text.view().size();
    }
  }
  std::size_t base = 0;
  try {
    base = journal_.append(pieces);
  } catch (const fs_error&) {
    return;  // the old segment stays; tried again at the next rotation
  }
  const std::uint64_t active = journal_.active();
  std::lock_guard lock(mutex_);
  // One retired while being copied keeps its place: its retire entry comes after the copy, and
  // counts against the old segment.
  for (std::size_t i = 0; i < puts.size(); ++i) index_.move(puts[i].key, puts[i].seq, active, base + text_at[i]);
  for (const std::string& id : delivery_ids) index_.move_delivery(id, active);
}

}  // namespace handoff
