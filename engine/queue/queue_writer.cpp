// queue_writer (its contract: queue_writer.hpp): the thread, the changes handed to it, and its work
// between groups: it takes every change submitted while it was busy as one group (written by
// queue_writer_group.cpp), then compacts (queue_compaction.hpp), keeps a spare text file and
// writes zeros ahead. A put that finds it idle is written as a group of one by its own thread.
#include "engine/queue/queue_writer.hpp"

#include <algorithm>

#include "engine/queue/queue_change.hpp"

namespace handoff {

queue_writer::queue_writer(parts p, admit_again again)
    : p_(p), admit_again_(std::move(again)), thread_([this] { write_loop(); }) {}

queue_writer::~queue_writer() { stop(); }

void queue_writer::stop() {
  {
    std::lock_guard lock(p_.mutex);
    stopping_ = true;
  }
  wake_writer_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void queue_writer::submit(change_ptr c) {
  submitted_.push_back(std::move(c));
  wake_writer_.notify_one();
}

bool queue_writer::wait_behind(const change_ptr& c) {
  const auto p = putting_.find(c->key);
  if (p == putting_.end()) return false;
  p->second.push_back(c);  // admitted again once the first one is settled (after_group)
  return true;
}

// A put that finds the writer idle, with nothing submitted and no tidying due, is written by its
// own thread (write_alone): waking the writer thread costs a noticeable part of a small
// completion.
bool queue_writer::take_put(const change_ptr& c) {
  putting_[c->key];
  if (writing_ || tidy_due_ || stopping_ || !submitted_.empty()) {
    submit(c);
    return false;
  }
  writing_ = true;  // the writer is idle: the caller writes it, once the lock is let go
  return true;
}

void queue_writer::write_and_wait(const change_ptr& c, std::unique_lock<std::mutex>& lock) {
  submit(c);
  settled_.wait(lock, [&] { return c->finished; });
}

void queue_writer::write_loop() {
  for (;;) {
    std::vector<change_ptr> group;
    {
      std::unique_lock lock(p_.mutex);
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
             (group.empty() || bytes + submitted_.front()->bytes() <= p_.options.group_bytes)) {
        bytes += submitted_.front()->bytes();
        group.push_back(std::move(submitted_.front()));
        submitted_.pop_front();
      }
    }
    if (!group.empty()) {
      write_group(group);
      after_group(group);
    }
    p_.compaction.run();
    keep_spare_text();
    keep_zeros_ahead();
    std::lock_guard lock(p_.mutex);
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
void queue_writer::write_alone(change_ptr c) noexcept {
  std::vector<change_ptr> group{std::move(c)};
  write_group(group);
  after_group(group);
  std::lock_guard lock(p_.mutex);
  writing_ = false;
  tidy_due_ = true;
  wake_writer_.notify_one();
}

bool queue_writer::changes_waiting() const {
  std::lock_guard lock(p_.mutex);
  return stopping_ || !submitted_.empty();
}

void queue_writer::keep_spare_text() {
  if (changes_waiting()) return;  // they go first (the next group's end tries again)
  p_.texts.keep_spare();          // none made: a put opens its own
}

void queue_writer::keep_zeros_ahead() {
  // Changes are waiting: they go first, before and while the zeros are written. Under load the
  // writer seldom finds none waiting, and its groups extend the file as before: zeros laid down
  // between groups held them up (the load bench 15% slower) for a sync saved on groups that
  // were waiting anyway.
  if (changes_waiting()) return;
  // Skipped, interrupted or refused: the next groups extend the file. A window no larger than
  // a segment.
  p_.journal.zero_ahead(std::min(p_.options.zero_ahead_bytes, p_.options.segment_bytes),
                        [this] { return changes_waiting(); });
}

}  // namespace handoff