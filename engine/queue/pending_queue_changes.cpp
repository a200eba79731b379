// pending_queue's changing calls (pending_queue.hpp): each is judged under the queue's one mutex
// against what the index holds, what the writer has in flight and what the tombstones remember,
// then handed to the writer (queue_writer.hpp), and answered once its group is on disk.
#include "engine/queue/pending_queue.hpp"

#include <future>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "engine/fs/sha256.hpp"
#include "engine/queue/journal_entry.hpp"
#include "engine/queue/queue_change.hpp"
#include "engine/queue/queue_disk.hpp"
#include "engine/queue/queue_parts.hpp"

namespace handoff {

namespace {

using change_ptr = queue_writer::change_ptr;

std::string describe(const completion& c) {
  return "child \"" + c.child_id + "\" of parent \"" + c.parent_id + "\"";
}

std::string checked_meta(std::string meta, const std::string& what) {
  if (meta.size() > max_entry_meta_bytes) {
    throw std::invalid_argument(what + " would exceed " + std::to_string(max_entry_meta_bytes) + " bytes");
  }
  return meta;
}

// A resend (held, being put, or delivered already) is answered from memory, or written by the
// writer once the first put is settled: its text is not written ahead, which would cost a write,
// an fsync and the spare file for nothing.
bool known_already(const queue_parts& q, const std::string& key) {
  std::lock_guard lock(q.mutex);
  return q.index.holds(key) || q.writer.in_flight(key) || q.tombstones.find(key).has_value();
}

// Hashing, measuring and encoding need no shared state: done before taking the lock. Throws
// std::invalid_argument for what cannot be stored (not UTF-8).
change_ptr make_put(const queue_parts& q, const completion& c, std::string_view text) {
  auto ch = std::make_shared<queue_change>();
  ch->what = queue_change::kind::put;
  ch->key = completion_key(c.parent_id, c.child_id);
  ch->place = text.size() >= q.options.file_text_bytes ? text_place::in_file : text_place::in_journal;
  check_storable(held_result{0, c, {}, {}, 0});  // refuses non-UTF-8 before anything is written
  const auto look_at = [text] { return std::pair{sha256_hex(text), measure(text)}; };
  std::pair<std::string, text_shape> seen;
  if (ch->place == text_place::in_file && !known_already(q, ch->key)) {
    // A text of its own file: the file's name needs the hash, its bytes do not, so they are
    // written and synced (this thread) while the hash is computed and the lines counted
    // (another): that hides the SHA-256 of a large text behind the write and its fsync
    // (docs/design.md §8).
    std::future<std::pair<std::string, text_shape>> looked_at;
    try {
      looked_at = std::async(std::launch::async, look_at);
    } catch (const std::system_error&) {
      // No thread to be had: one after the other, as for a small text.
    }
    ch->prewritten = q.texts.write_unnamed(text);  // into the spare, when the writer kept one
    seen = looked_at.valid() ? looked_at.get() : look_at();
  } else {
    seen = look_at();
  }
  ch->held = held_result{0, c, std::move(seen.first), seen.second, unix_ms_now()};
  ch->text = text;
  return ch;
}

// Memory lets go at once (nothing can consume a result twice); the disk follows with the group.
std::vector<std::string> retire_blocking(queue_parts& q, const std::vector<std::uint64_t>& seqs, std::string ack_id) {
  auto ch = std::make_shared<queue_change>();
  ch->what = queue_change::kind::retire;
  const std::int64_t now = unix_ms_now();
  std::unique_lock lock(q.mutex);
  q.require_recovered();
  for (const std::uint64_t seq : seqs) {
    auto r = q.index.release(seq);
    if (!r) continue;  // unknown, or listed twice
    const tombstone t{r->e.held.sha256, seq, now};
    ch->heads.push_back(encode_entry_head(entry_kind::retire, encode_retire(r->key, t), 0));
    q.tombstones.retiring(r->key, t);  // resends are recognised from now on
    ch->retired.push_back({std::move(r->key), t, r->e.where.segment, r->e.where.place});
  }
  if (!ack_id.empty()) {
    if (const auto segment = q.index.end_delivery(ack_id)) {
      ch->ack_segment = *segment;
      ch->heads.push_back(encode_entry_head(entry_kind::acknowledged, encode_acknowledged(ack_id), 0));
      ch->ack_id = std::move(ack_id);
    }
  }
  if (ch->heads.empty()) return {};
  q.stats.publish(q.index, q.tombstones);
  q.writer.write_and_wait(ch, lock);
  return ch->problems;
}

}  // namespace

// A put is, in turn: a conflict or a duplicate of what is held; behind a put of the same key in
// flight (admitted again once it is settled); a conflict or a duplicate of what left; or new,
// given the next seq and handed to the writer, which may give it back to be written here.
void pending_queue::put_async(const completion& c, std::string_view final_text, put_callback done) {
  queue_parts& q = *parts_;
  change_ptr ch;
  try {
    ch = make_put(q, c, final_text);
  } catch (...) {
    done(std::current_exception(), {});
    return;
  }
  ch->done = std::move(done);
  std::exception_ptr error;
  put_outcome answer;
  bool write_here = false;
  {
    std::lock_guard lock(q.mutex);
    q.require_recovered();
    const held_result& h = ch->held;
    if (const queue_index::entry* held = q.index.find(ch->key)) {
      if (held->held.sha256 != h.sha256) {
        error = std::make_exception_ptr(queue_conflict(describe(c) + " already completed with another final text"));
      } else {
        answer = {held->held, true, false};
      }
    } else if (q.writer.wait_behind(ch)) {
      return;
    } else if (const auto t = q.tombstones.find(ch->key)) {
      if (t->sha256 != h.sha256) {
        error = std::make_exception_ptr(queue_conflict(describe(c) + " was already delivered with another final text"));
      } else {
        answer = {held_result{t->seq, c, h.sha256, h.shape, 0}, true, true};
      }
    } else {
      ch->held.seq = q.next_seq;
      const std::size_t text_bytes = ch->place == text_place::in_journal ? final_text.size() : 0;
      try {
        ch->heads.push_back(encode_entry_head(
            entry_kind::put, checked_meta(encode_put(ch->held, ch->place), "the record of " + describe(c)), text_bytes));
      } catch (...) {
        error = std::current_exception();
      }
      if (!error) {
        ++q.next_seq;
        if (!q.writer.take_put(ch)) return;  // submitted: answered by the writer thread
        write_here = true;
      }
    }
  }
  if (write_here) {
    q.writer.write_alone(std::move(ch));
    return;
  }
  ch->done(error, answer);
}

pending_queue::put_outcome pending_queue::put(const completion& c, std::string_view final_text) {
  std::promise<put_outcome> promise;
  put_async(c, final_text, [&promise](std::exception_ptr error, put_outcome outcome) {
    if (error) {
      promise.set_exception(error);
    } else {
      promise.set_value(std::move(outcome));
    }
  });
  return promise.get_future().get();
}

void pending_queue::begin_delivery(const stored_delivery& d) {
  if (d.delivery_id.empty()) throw std::invalid_argument("a delivery needs an id");
  auto ch = std::make_shared<queue_change>();
  ch->what = queue_change::kind::delivery;
  ch->delivery = d;
  ch->heads.push_back(encode_entry_head(
      entry_kind::delivery, checked_meta(encode_delivery(d), "delivery " + d.delivery_id), 0));
  std::unique_lock lock(parts_->mutex);
  parts_->require_recovered();
  parts_->writer.write_and_wait(ch, lock);
  if (ch->error) std::rethrow_exception(ch->error);
}

std::vector<std::string> pending_queue::complete_delivery(std::string_view delivery_id) {
  std::vector<std::uint64_t> seqs;
  {
    std::lock_guard lock(parts_->mutex);
    parts_->require_recovered();
    const stored_delivery* d = parts_->index.delivery(std::string(delivery_id));
    if (d == nullptr) return {};
    seqs = d->seqs;
  }
  return retire_blocking(*parts_, seqs, std::string(delivery_id));
}

std::vector<std::string> pending_queue::consume(const std::vector<std::uint64_t>& seqs) {
  return retire_blocking(*parts_, seqs, {});
}

}  // namespace handoff
