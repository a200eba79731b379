// queue_writer's one group (its contract: queue_writer.hpp): the texts of file size first, each
// saved and synced, then one append and one fdatasync of the journal; then memory follows
// (apply, under the lock); then, without the lock, tombstone files, texts nobody uses, and the
// answers.
#include "engine/queue/queue_writer.hpp"

#include <cerrno>

#include "engine/fs/atomic_file.hpp"
#include "engine/queue/journal_entry.hpp"
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

void queue_writer::write_group(std::vector<change_ptr>& group) {
  // Large texts as their own files, each written and fsynced, before any entry names them.
  for (auto& c : group) {
    if (c->what != queue_change::kind::put || c->place != text_place::in_file) continue;
    bool held_already = false;
    {
      std::lock_guard lock(p_.mutex);
      held_already = p_.index.uses_text(c->held.sha256);
    }
    if (held_already) continue;
    std::optional<handoff::text_file> written;  // the text already on disk, unnamed: linked, not copied
    if (c->prewritten) written = handoff::text_file{-1, {}, c->prewritten->get()};
    const artifact_ref text = p_.texts.save(c->text, c->held.sha256, written);
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
    if (!pieces.empty()) base = p_.journal.append(pieces);
    segment = p_.journal.active();
  } catch (const fs_error& e) {
    for (auto& c : group) {
      if (c->error) continue;
      const std::string what = c->what == queue_change::kind::put        ? "the completion was not stored: "
                               : c->what == queue_change::kind::delivery ? "the delivery was not recorded: "
                                                                   : "";
      c->error = std::make_exception_ptr(queue_error(what + e.what()));
    }
  }
  std::lock_guard lock(p_.mutex);
  for (std::size_t i = 0; i < group.size(); ++i) apply(*group[i], segment, base + starts[i]);
  p_.stats.wrote_group(group.size());
  p_.stats.journal_is(p_.journal.total_bytes());
  p_.stats.publish(p_.index, p_.tombstones);
}

// With the queue's mutex held: the change is on disk (or failed, with c.error set); memory follows.
void queue_writer::apply(queue_change& c, std::uint64_t segment, std::size_t start) {
  switch (c.what) {
    case queue_change::kind::put: {
      if (c.error) break;
      const std::size_t text_offset = start + c.heads.front().size();
      p_.index.hold(c.key, queue_index::entry{c.held, queue_index::location{segment, text_offset, c.place}});
      break;
    }
    case queue_change::kind::delivery:
      if (c.error) break;
      p_.index.add_delivery(c.delivery, segment);
      break;
    case queue_change::kind::retire:
      for (const auto& r : c.retired) {
        if (c.error) {
          // Still in the journal: delivered again after a restart, so its segment must stay.
          p_.tombstones.retire_refused(r.key, r.t);
          p_.index.refused(r.segment);
          continue;
        }
        p_.index.left(r.segment);
      }
      if (!c.ack_id.empty()) {
        if (c.error) {
          p_.index.refused(c.ack_segment);
        } else {
          p_.index.left(c.ack_segment);
        }
      }
      break;
  }
}

// Outside the lock: tombstone files for what left, texts nobody uses, then the answers.
void queue_writer::after_group(std::vector<change_ptr>& group) {
  std::vector<queue_tombstones::keyed> retired;
  std::vector<std::string> unused_texts;
  {
    std::lock_guard lock(p_.mutex);
    for (auto& c : group) {
      if (c->what == queue_change::kind::put && c->error && c->created_text_file && !p_.index.uses_text(c->held.sha256))
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
        if (p_.index.drop_text_use(r.t.sha256) && r.place == text_place::in_file) unused_texts.push_back(r.t.sha256);
      }
    }
  }
  write_done_files(retired);
  std::vector<std::string> removal_problems;
  for (const std::string& sha : unused_texts) {
    const std::string name = sha + ".txt";
    if (std::string err = remove_name(p_.texts_fd, name, "texts/" + name); !err.empty())
      removal_problems.push_back(std::move(err));
  }
  if (!unused_texts.empty()) sync_quietly(p_.texts_fd);

  std::vector<change_ptr> asked_again;
  {
    std::lock_guard lock(p_.mutex);
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
    p_.stats.publish(p_.index, p_.tombstones);
  }
  settled_.notify_all();
  for (auto& c : group) {
    if (c->what != queue_change::kind::put) continue;
    pending_queue::put_outcome outcome{c->held, false, false};
    c->done(c->error, c->error ? pending_queue::put_outcome{} : outcome);
  }
  // The same child again while its first put was being written: asked now that it is settled.
  for (auto& c : asked_again) admit_again_(std::move(c));
}

// Tombstone files are an index the journal can rebuild, so they are written without a sync;
// they are made durable (queue_tombstones::sync_files) before a segment holding their retire
// entries goes.
void queue_writer::write_done_files(const std::vector<queue_tombstones::keyed>& retired) {
  std::vector<queue_tombstones::keyed> refused;
  const std::size_t written = p_.tombstones.write_files(retired, refused, nullptr);
  std::lock_guard lock(p_.mutex);
  p_.tombstones.filed(retired, written, refused);
}

}  // namespace handoff
