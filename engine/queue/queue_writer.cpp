// The queue's writer thread: takes every change submitted while it was busy, writes them as
// one group (texts of file size first, then one append and one fdatasync of the journal),
// applies them to memory, answers them, and removes journal segments nothing needs any more.
#include <algorithm>
#include <cerrno>
#include <map>

#include "engine/fs/atomic_file.hpp"
#include "engine/queue/journal_entry.hpp"
#include "engine/queue/pending_queue.hpp"
#include "engine/queue/queue_change.hpp"
#include "engine/queue/queue_disk.hpp"

namespace handoff {

namespace {

std::string message_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

}  // namespace

void pending_queue::write_loop() {
  for (;;) {
    std::vector<std::shared_ptr<change>> group;
    {
      std::unique_lock lock(mutex_);
      // A put that found the writer idle is written by its own thread (write_alone): wait for
      // it, then tidy after it.
      wake_writer_.wait(lock, [&] { return !writing_ && (stopping_ || !submitted_.empty() || tidy_due_); });
      if (submitted_.empty() && !tidy_due_) return;  // stopping, and everything handed over is written
      writing_ = true;
      // After a put written alone, its tidying comes first: what was submitted meanwhile is
      // written after it (into the next segment, when this one is full), as after a group of ours.
      const bool tidy_only = tidy_due_;
      tidy_due_ = false;
      std::size_t bytes = 0;
      while (!tidy_only && !submitted_.empty() &&
             (group.empty() || bytes + submitted_.front()->bytes() <= options_.group_bytes)) {
        bytes += submitted_.front()->bytes();
        group.push_back(std::move(submitted_.front()));
        submitted_.pop_front();
      }
    }
    if (!group.empty()) {
      write_group(group);
      after_group(group);
    }
    compact();
    keep_spare_text();
    keep_zeros_ahead();
    std::lock_guard lock(mutex_);
    writing_ = false;
  }
}

// The group of one put that found the writer idle, written on the thread that made it: waking
// the writer thread cost 40-100 µs on this project's VM, a tenth of a 100 KiB completion
// (docs/benchmarks.md, issue 25). What follows every group (compaction, which may copy a
// segment forward, and the spare file) is left to the writer thread, so that the caller's
// thread (the daemon's pool) waits for no more than its own write and sync; no put is written
// alone until that tidying is done, so a segment still rotates right after the put that filled
// it. Under the lock, at the end: clearing writing_ and telling the writer, so that nothing of
// the queue is touched once another thread may go on (a destructor waits for the writer thread,
// which waits for writing_). noexcept: what the disk refuses is reported to the change, and
// anything else ends the process, as it would have on the writer thread.
void pending_queue::write_alone(std::shared_ptr<change> c) noexcept {
  std::vector<std::shared_ptr<change>> group{std::move(c)};
  write_group(group);
  after_group(group);
  std::lock_guard lock(mutex_);
  writing_ = false;
  tidy_due_ = true;
  wake_writer_.notify_one();
}

void pending_queue::write_group(std::vector<std::shared_ptr<change>>& group) {
  // Large texts as their own files, each written and fsynced, before any entry names them.
  for (auto& c : group) {
    if (c->what != change::kind::put || c->place != text_place::in_file) continue;
    bool held_already = false;
    {
      std::lock_guard lock(mutex_);
      held_already = text_refs_.contains(c->held.sha256);
    }
    if (held_already) continue;
    std::optional<handoff::text_file> written;  // the text already on disk, unnamed: linked, not copied
    if (c->prewritten) written = handoff::text_file{-1, {}, c->prewritten->get()};
    const artifact_ref text = texts_.save(c->text, c->held.sha256, written);
    c->prewritten.reset();
    if (!text.saved) {
      c->error = std::make_exception_ptr(queue_error("the final text was not stored: " + text.error));
    } else {
      c->created_text_file = true;
    }
  }
  std::vector<iovec> pieces;
  std::vector<std::size_t> starts;  // each change's offset from the group's start
  std::size_t at = 0;
  for (auto& c : group) {
    starts.push_back(at);
    if (c->error) continue;
    for (const std::string& h : c->heads) {
      pieces.push_back(journal_piece(h));
      at += h.size();
    }
    if (c->what == change::kind::put && c->place == text_place::in_journal && !c->text.empty()) {
      pieces.push_back(journal_piece(c->text));
      at += c->text.size();
    }
  }
  std::size_t base = 0;
  std::uint64_t segment = 0;
  try {
    if (!pieces.empty()) base = journal_.append(pieces);
    segment = journal_.active();
  } catch (const fs_error& e) {
    for (auto& c : group) {
      if (c->error) continue;
      const std::string what = c->what == change::kind::put        ? "the completion was not stored: "
                               : c->what == change::kind::delivery ? "the delivery was not recorded: "
                                                                   : "";
      c->error = std::make_exception_ptr(queue_error(what + e.what()));
    }
  }
  std::lock_guard lock(mutex_);
  for (std::size_t i = 0; i < group.size(); ++i) apply(*group[i], segment, base + starts[i]);
  ++groups_;
  changes_ += group.size();
  journal_bytes_ = journal_.total_bytes();
  publish_stats();
}

// With mutex_ held: the change is on disk (or failed, with c.error set); memory follows.
void pending_queue::apply(change& c, std::uint64_t segment, std::size_t start) {
  switch (c.what) {
    case change::kind::put: {
      if (c.error) break;
      const std::size_t text_offset = start + c.heads.front().size();
      by_key_.emplace(c.key, entry{c.held, location{segment, text_offset, c.place}});
      key_by_seq_.emplace(c.held.seq, c.key);
      add_text_use(c.held.sha256, c.held.shape.bytes);
      ++live_[segment];
      break;
    }
    case change::kind::delivery:
      if (c.error) break;
      deliveries_[c.delivery.delivery_id] = {c.delivery, segment};
      ++live_[segment];
      break;
    case change::kind::retire:
      for (const auto& r : c.retired) {
        if (c.error) {
          recent_tombstones_.erase(r.key);
          // Still in the journal: delivered again after a restart, so its segment must stay.
          unwritten_tombstones_[r.key] = r.t;
          ++stuck_[r.segment];
          continue;
        }
        --live_[r.segment];
      }
      if (!c.ack_id.empty()) {
        if (c.error) {
          ++stuck_[c.ack_segment];
        } else {
          --live_[c.ack_segment];
        }
      }
      break;
  }
}

// Outside the lock: tombstone files for what left, texts nobody uses, then the answers.
void pending_queue::after_group(std::vector<std::shared_ptr<change>>& group) {
  std::vector<std::pair<std::string, tombstone>> retired;
  std::vector<std::string> unused_texts;
  {
    std::lock_guard lock(mutex_);
    for (auto& c : group) {
      if (c->what == change::kind::put && c->error && c->created_text_file && !text_refs_.contains(c->held.sha256))
        unused_texts.push_back(c->held.sha256);
      if (c->what != change::kind::retire) continue;
      if (c->error) {
        for (const auto& r : c->retired) {
          c->problems.push_back("result " + std::to_string(r.t.seq) + " stays in the queue and will be " +
                                "delivered again after a restart: " + message_of(c->error));
        }
        continue;
      }
      for (const auto& r : c->retired) {
        retired.emplace_back(r.key, r.t);
        if (drop_text_use(r.t.sha256) && r.place == text_place::in_file) unused_texts.push_back(r.t.sha256);
      }
    }
  }
  write_done_files(retired);
  std::vector<std::string> removal_problems;
  for (const std::string& sha : unused_texts) {
    const std::string name = sha + ".txt";
    if (std::string err = remove_name(texts_fd_.get(), name, "texts/" + name); !err.empty())
      removal_problems.push_back(std::move(err));
  }
  if (!unused_texts.empty()) sync_quietly(texts_fd_.get());

  std::vector<std::shared_ptr<change>> asked_again;
  {
    std::lock_guard lock(mutex_);
    for (auto& c : group) {
      if (c->what == change::kind::retire) c->problems.insert(c->problems.end(), removal_problems.begin(), removal_problems.end());
      if (c->what == change::kind::put) {
        const auto waiting = putting_.find(c->key);
        if (waiting != putting_.end()) {
          asked_again.insert(asked_again.end(), waiting->second.begin(), waiting->second.end());
          putting_.erase(waiting);
        }
      }
      c->finished = true;
    }
    publish_stats();
  }
  settled_.notify_all();
  for (auto& c : group) {
    if (c->what != change::kind::put) continue;
    put_outcome outcome{c->held, false, false};
    c->done(c->error, c->error ? put_outcome{} : outcome);
  }
  // The same child again while its first put was being written: asked now that it is settled.
  for (auto& c : asked_again) put_async(c->held.info, c->text, std::move(c->done));
}

// Tombstone files are an index the journal can rebuild, so they are written without a sync;
// they are made durable (sync_done_files) before a segment holding their retire entries goes.
void pending_queue::write_done_files(const std::vector<std::pair<std::string, tombstone>>& retired) {
  std::vector<std::pair<std::string, tombstone>> refused;
  const std::size_t written = file_tombstones(retired, refused, nullptr);
  std::lock_guard lock(mutex_);
  tombstone_count_ += written;
  for (auto& [key, t] : refused) unfiled_tombstones_[key] = t;  // the journal has it; retried
  // Only now: until its file (or the refusal) is there, memory is what recognises a resend.
  for (const auto& [key, t] : retired) recent_tombstones_.erase(key);
}

// The writing itself, shared with recovery: no lock taken (only the writer, or recovery before
// it starts, writes done/ and unsynced_done_). Returns how many were written.
std::size_t pending_queue::file_tombstones(const std::vector<std::pair<std::string, tombstone>>& retired,
                                           std::vector<std::pair<std::string, tombstone>>& refused,
                                           std::vector<std::string>* why) {
  std::size_t written = 0;
  for (const auto& [key, t] : retired) {
    try {
      write_file_atomically(done_fd_.get(), key, encode_tombstone(t), publish_mode::replace, "a tombstone",
                            temp_method::automatic, when_synced::by_caller);
      ++written;
      unsynced_done_.push_back(key);
    } catch (const fs_error& e) {
      refused.emplace_back(key, t);
      if (why != nullptr) why->push_back(e.what());
    }
  }
  return written;
}

void pending_queue::sync_done_files() {
  if (unsynced_done_.empty()) return;
  for (const std::string& key : unsynced_done_) {
    private_file f = open_private_file(done_fd_.get(), key, "done/" + key);
    if (f.state == private_file::status::ok) sync_quietly(f.fd.get());
  }
  sync_quietly(done_fd_.get());
  unsynced_done_.clear();
}

// Segments go oldest first, and only when nothing in them is needed: a retire entry is never
// dropped while the put it retires may still be replayed. When the active segment is full a new
// one starts, and what is still needed in older sealed segments is copied forward.
void pending_queue::compact() {
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
      if (live_[s] != 0 || stuck_[s] != 0) break;
      live_.erase(s);
      stuck_.erase(s);
    }
    sync_done_files();
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
bool pending_queue::write_mark() {
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
bool pending_queue::refile_tombstones() {
  std::vector<std::pair<std::string, tombstone>> again;
  {
    std::lock_guard lock(mutex_);
    if (unfiled_tombstones_.empty()) return true;
    again.assign(unfiled_tombstones_.begin(), unfiled_tombstones_.end());
  }
  // Each stays listed until its file is there: while the files are written (slow on a busy or
  // full disk) a resend must still be recognised, or it would be queued and delivered again.
  std::vector<std::pair<std::string, tombstone>> refused;
  const std::size_t written = file_tombstones(again, refused, nullptr);
  std::lock_guard lock(mutex_);
  tombstone_count_ += written;
  for (const auto& [key, t] : again) {
    const bool still_refused =
        std::any_of(refused.begin(), refused.end(), [&key = key](const auto& r) { return r.first == key; });
    if (!still_refused) unfiled_tombstones_.erase(key);
  }
  return unfiled_tombstones_.empty();
}

// Re-appends what is still held or unacknowledged in `segment` to the active one, so the old
// segment can go; only when at most a quarter of it is still held.
void pending_queue::copy_forward(std::uint64_t segment) {
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
    if (stuck_[segment] != 0 || live_[segment] == 0) return;
    // Worth it only when most of the segment is dead: copying a segment that is mostly still
    // held would only write the same bytes again (and again at the next rotation).
    std::size_t live_bytes = 0;
    for (const auto& [key, e] : by_key_)
      if (e.where.segment == segment) live_bytes += e.held.shape.bytes + entry_header_bytes;
    if (live_bytes * 4 > journal_.segment_size(segment)) return;
    for (const auto& [key, e] : by_key_) {
      if (e.where.segment != segment) continue;
      mapped_file text;
      if (e.where.place == text_place::in_journal)
        text = mapped_file(journal_.segment_fd(segment), e.where.text_offset, e.held.shape.bytes);
      heads.push_back(encode_entry_head(entry_kind::put, encode_put(e.held, e.where.place), text.view().size()));
      puts.push_back({key, e.held.seq, std::move(text)});
    }
    for (const auto& [id, d] : deliveries_) {
      if (d.second != segment) continue;
      heads.push_back(encode_entry_head(entry_kind::delivery, encode_delivery(d.first), 0));
      delivery_ids.push_back(id);
    }
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
  for (std::size_t i = 0; i < puts.size(); ++i) {
    const auto it = by_key_.find(puts[i].key);
    // Retired while being copied: its retire entry comes after the copy, and counts against
    // the old segment.
    if (it == by_key_.end() || it->second.held.seq != puts[i].seq) continue;
    it->second.where.segment = active;
    it->second.where.text_offset = base + text_at[i];
    --live_[segment];
    ++live_[active];
  }
  for (const std::string& id : delivery_ids) {
    const auto it = deliveries_.find(id);
    if (it == deliveries_.end()) continue;
    it->second.second = active;
    --live_[segment];
    ++live_[active];
  }
}

}  // namespace handoff
