// queue_compaction (its contract: queue_compaction.hpp): the active segment rotates when full,
// older segments go once nothing in them is needed, and what is still needed in a mostly dead
// one is copied forward. Memory is read and changed under the queue's mutex, the journal
// without it.
#include "engine/queue/queue_compaction.hpp"

#include <string>
#include <vector>

#include "engine/fs/mapped_file.hpp"
#include "engine/queue/journal_entry.hpp"
#include "engine/queue/queue_files.hpp"

namespace handoff {

// Segments go oldest first, and only when nothing in them is needed: a retire entry is never
// dropped while the put it retires may still be replayed. When the active segment is full a new
// one starts, and what is still needed in older sealed segments is copied forward.
void queue_compaction::run() {
  bool rotated = false;
  try {
    rotated = p_.journal.rotate_if_over(segment_bytes_);
  } catch (const fs_error&) {
    return;  // the old segment stays active; tried again after the next group
  }
  // No older segment goes before the new one has its mark, nor while a tombstone file the disk
  // refused exists only in memory (its retire entry would go with the segment).
  if ((rotated || mark_missing_) && !write_mark()) return;
  if (!refile_tombstones()) return;
  const std::vector<std::uint64_t> segments = p_.journal.segments();
  if (rotated && segments.size() >= 3) {
    for (std::size_t i = 0; i + 2 < segments.size(); ++i) copy_forward(segments[i]);
  }
  for (const std::uint64_t s : p_.journal.segments()) {
    if (s == p_.journal.active()) break;
    {
      std::lock_guard lock(p_.mutex);
      if (!p_.index.forget_segment(s)) break;
    }
    p_.tombstones.sync_files();
    try {
      p_.journal.remove(s);
    } catch (const fs_error&) {
      break;  // tried again after the next group
    }
  }
  std::lock_guard lock(p_.mutex);
  p_.stats.journal_is(p_.journal.total_bytes());
  p_.stats.publish(p_.index, p_.tombstones);
}

// A new segment starts with the next seq: once the older segments are gone, it is what keeps
// seqs increasing across a restart. False when it could not be written.
bool queue_compaction::write_mark() {
  std::uint64_t next = 0;
  {
    std::lock_guard lock(p_.mutex);
    next = next_seq_();
  }
  const std::string head = encode_entry_head(entry_kind::mark, encode_mark(next), 0);
  try {
    p_.journal.append({journal_piece(head)});
    mark_missing_ = false;
  } catch (const fs_error&) {
    mark_missing_ = true;
  }
  return !mark_missing_;
}

// Tries again the tombstone files the disk refused; true when none is left in memory only.
bool queue_compaction::refile_tombstones() {
  std::vector<queue_tombstones::keyed> again;
  {
    std::lock_guard lock(p_.mutex);
    if (p_.tombstones.all_filed()) return true;
    again = p_.tombstones.unfiled();
  }
  // Each stays listed until its file is there: while the files are written (slow on a busy or
  // full disk) a resend must still be recognised, or it would be queued and delivered again.
  std::vector<queue_tombstones::keyed> refused;
  const std::size_t written = p_.tombstones.write_files(again, refused, nullptr);
  std::lock_guard lock(p_.mutex);
  return p_.tombstones.refiled(again, written, refused);
}

// Re-appends what is still held or unacknowledged in `segment` to the active one, so the old
// segment can go; only when at most a quarter of it is still held.
void queue_compaction::copy_forward(std::uint64_t segment) {
  struct moved_put {
    std::string key;
    std::uint64_t seq;
    mapped_file text;
  };
  std::vector<moved_put> puts;
  std::vector<std::string> delivery_ids;
  std::vector<std::string> heads;
  {
    std::lock_guard lock(p_.mutex);
    if (p_.index.stuck(segment) != 0 || p_.index.live(segment) == 0) return;
    // Worth it only when most of the segment is dead: copying a segment that is mostly still
    // held would only write the same bytes again (and again at the next rotation).
    std::size_t live_bytes = 0;
    p_.index.each_held([&](const std::string&, const queue_index::entry& e) {
      if (e.where.segment == segment) live_bytes += e.held.shape.bytes + entry_header_bytes;
    });
    if (live_bytes * 4 > p_.journal.segment_size(segment)) return;
    p_.index.each_held([&](const std::string& key, const queue_index::entry& e) {
      if (e.where.segment != segment) return;
      mapped_file text;
      if (e.where.place == text_place::in_journal)
        text = mapped_file(p_.journal.segment_fd(segment), e.where.text_offset, e.held.shape.bytes);
      heads.push_back(encode_entry_head(entry_kind::put, encode_put(e.held, e.where.place), text.view().size()));
      puts.push_back({key, e.held.seq, std::move(text)});
    });
    p_.index.each_delivery([&](const std::string& id, const stored_delivery& d, std::uint64_t in) {
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
    base = p_.journal.append(pieces);
  } catch (const fs_error&) {
    return;  // the old segment stays; tried again at the next rotation
  }
  const std::uint64_t active = p_.journal.active();
  std::lock_guard lock(p_.mutex);
  // One retired while being copied keeps its place: its retire entry comes after the copy, and
  // counts against the old segment.
  for (std::size_t i = 0; i < puts.size(); ++i) p_.index.move(puts[i].key, puts[i].seq, active, base + text_at[i]);
  for (const std::string& id : delivery_ids) p_.index.move_delivery(id, active);
}

}  // namespace handoff
