// The queue's writer thread: takes every change submitted while it was busy, writes them as
// one group (texts of file size first, then one append and one fdatasync of the journal),
// applies them to the index and the tombstones, and answers them; between groups it compacts
// (queue_compaction.cpp), keeps a spare text file and writes zeros ahead.
#include <algorithm>
#include <cerrno>
#include <map>

#include "engine/fs/atomic_file.hpp"
#include "engine/queue/journal_entry.hpp"
#include "engine/queue/queue_change.hpp"
#include "engine/queue/queue_core.hpp"
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

void queue_core::write_loop() {
  for (;;) {
    std::vector<change_ptr> group;
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
// the writer thread costs a noticeable part of a small completion (docs/benchmarks.md, "Figures
// behind the code"). What follows every group (compaction, which may copy a
// segment forward, and the spare file) is left to the writer thread, so that the caller's
// thread (the daemon's pool) waits for no more than its own write and sync; no put is written
// alone until that tidying is done, so a segment still rotates right after the put that filled
// it. Under the lock, at the end: clearing writing_ and telling the writer, so that nothing of
// the queue is touched once another thread may go on (a destructor waits for the writer thread,
// which waits for writing_). noexcept: what the disk refuses is reported to the change, and
// anything else ends the process, as it would have on the writer thread.
void queue_core::write_alone(change_ptr c) noexcept {
  std::vector<change_ptr> group{std::move(c)};
  write_group(group);
  after_group(group);
  std::lock_guard lock(mutex_);
  writing_ = false;
  tidy_due_ = true;
  wake_writer_.notify_one();
}

void queue_core::write_group(std::vector<change_ptr>& group) {
  // Large texts as their own files, each written and fsynced, before any entry names them.
  for (auto& c : group) {
    if (c->what != queue_change::kind::put || c->place != text_place::in_file) continue;
    bool held_already = false;
    {
      std::lock_guard lock(mutex_);
      held_already = index_.uses_text(c->held.sha256);
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
    if (c->what == queue_change::kind::put && c->place == text_place::in_journal && !c->text.empty()) {
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
      const std::string what = c->what == queue_change::kind::put        ? "the completion was not stored: "
                               : c->what == queue_change::kind::delivery ? "the delivery was not recorded: "
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
void queue_core::apply(queue_change& c, std::uint64_t segment, std::size_t start) {
  switch (c.what) {
    case queue_change::kind::put: {
      if (c.error) break;
      const std::size_t text_offset = start + c.heads.front().size();
      index_.hold(c.key, queue_index::entry{c.held, queue_index::location{segment, text_offset, c.place}});
      break;
    }
    case queue_change::kind::delivery:
      if (c.error) break;
      index_.add_delivery(c.delivery, segment);
      break;
    case queue_change::kind::retire:
      for (const auto& r : c.retired) {
        if (c.error) {
          // Still in the journal: delivered again after a restart, so its segment must stay.
          tombstones_.retire_refused(r.key, r.t);
          index_.refused(r.segment);
          continue;
        }
        index_.left(r.segment);
      }
      if (!c.ack_id.empty()) {
        if (c.error) {
          index_.refused(c.ack_segment);
        } else {
          index_.left(c.ack_segment);
        }
      }
      break;
  }
}

// Outside the lock: tombstone files for what left, texts nobody uses, then the answers.
void queue_core::after_group(std::vector<change_ptr>& group) {
  std::vector<queue_tombstones::keyed> retired;
  std::vector<std::string> unused_texts;
  {
    std::lock_guard lock(mutex_);
    for (auto& c : group) {
      if (c->what == queue_change::kind::put && c->error && c->created_text_file && !index_.uses_text(c->held.sha256))
        unused_texts.push_back(c->held.sha256);
      if (c->what != queue_change::kind::retire) continue;
      if (c->error) {
        for (const auto& r : c->retired) {
          c->problems.push_back("result " + std::to_string(r.t.seq) + " stays in the queue and will be " +
                                "delivered again after a restart: " + message_of(c->error));
        }
        continue;
      }
      for (const auto& r : c->retired) {
        retired.emplace_back(r.key, r.t);
        if (index_.drop_text_use(r.t.sha256) && r.place == text_place::in_file) unused_texts.push_back(r.t.sha256);
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

  std::vector<change_ptr> asked_again;
  {
    std::lock_guard lock(mutex_);
    for (auto& c : group) {
      if (c->what == queue_change::kind::retire) c->problems.insert(c->problems.end(), removal_problems.begin(), removal_problems.end());
      if (c->what == queue_change::kind::put) {
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
    if (c->what != queue_change::kind::put) continue;
    put_outcome outcome{c->held, false, false};
    c->done(c->error, c->error ? put_outcome{} : outcome);
  }
  // The same child again while its first put was being written: asked now that it is settled.
  for (auto& c : asked_again) put_async(c->held.info, c->text, std::move(c->done));
}

// Tombstone files are an index the journal can rebuild, so they are written without a sync;
// they are made durable (queue_tombstones::sync_files) before a segment holding their retire
// entries goes.
void queue_core::write_done_files(const std::vector<queue_tombstones::keyed>& retired) {
  std::vector<queue_tombstones::keyed> refused;
  const std::size_t written = tombstones_.write_files(retired, refused, nullptr);
  std::lock_guard lock(mutex_);
  tombstones_.filed(retired, written, refused);
}

}  // namespace handoff
