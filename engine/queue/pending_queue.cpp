// The queue's calls: each checks what memory knows, then hands a change to the writer
// (queue_writer.cpp) and answers when its group is on disk. pending_queue forwards to them.
#include "engine/queue/pending_queue.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <future>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <sys/file.h>

#include "engine/fs/atomic_file.hpp"
#include "engine/queue/journal_entry.hpp"
#include "engine/fs/private_dir.hpp"
#include "engine/queue/queue_change.hpp"
#include "engine/queue/queue_core.hpp"
#include "engine/queue/queue_disk.hpp"
#include "engine/fs/sha256.hpp"

namespace handoff {

namespace {

constexpr std::string_view what_dir = "queue dir";

unique_fd open_area(int queue_fd, const std::filesystem::path& queue_dir, const char* name) {
  return open_private_subdir(queue_fd, name, queue_dir / name, what_dir);
}

// One process per queue: a second handoffd on the same directory (started for another socket,
// or racing the first to start) would replay and rewrite the journal under the first.
unique_fd lock_queue(int queue_fd, const std::filesystem::path& queue_dir) {
  unique_fd fd(::openat(queue_fd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) throw std::system_error(errno, std::generic_category(), "cannot open " + (queue_dir / "lock").string());
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK)
      throw std::runtime_error("the queue " + queue_dir.string() + " is in use by another handoffd (its lock is held)");
    throw std::system_error(errno, std::generic_category(), "cannot lock " + (queue_dir / "lock").string());
  }
  return fd;
}

std::string describe(const completion& c) {
  return "child \"" + c.child_id + "\" of parent \"" + c.parent_id + "\"";
}

std::string checked_meta(std::string meta, const std::string& what) {
  if (meta.size() > max_entry_meta_bytes) {
    throw std::invalid_argument(what + " would exceed " + std::to_string(max_entry_meta_bytes) + " bytes");
  }
  return meta;
}

}  // namespace

static_assert(pending_queue::expired_file == queue_tombstones::expired_file);

// The queue directory is checked (ours, 0700, not a symlink) before anything is created in it.
queue_core::queue_core(std::filesystem::path dir, queue_options options)
    : dir_(normalize_dir(dir)),
      options_(options),
      dir_fd_(open_private_dir(dir_, what_dir)),
      lock_fd_(lock_queue(dir_fd_.get(), dir_)),
      texts_(dir_ / "texts", when_moved::refuse, "queued text"),
      texts_fd_(open_area(dir_fd_.get(), dir_, "texts")),
      tombstones_(dir_fd_.get(), dir_),
      journal_(dir_fd_.get(), dir_),
      writer_([this] { write_loop(); }) {}

queue_core::~queue_core() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_writer_.notify_all();
  writer_.join();
}

void queue_core::require_recovered() const {
  if (!recovered_) throw std::logic_error("pending_queue: call recover() before using the queue");
}

void queue_core::submit(change_ptr c) {
  submitted_.push_back(std::move(c));
  wake_writer_.notify_one();
}

// Hashing, measuring and encoding need no shared state: done before taking the lock. Throws
// std::invalid_argument for what cannot be stored (not UTF-8).
queue_core::change_ptr queue_core::make_put(const completion& c, std::string_view text) {
  auto ch = std::make_shared<queue_change>();
  ch->what = queue_change::kind::put;
  ch->key = completion_key(c.parent_id, c.child_id);
  ch->place = text.size() >= options_.file_text_bytes ? text_place::in_file : text_place::in_journal;
  check_storable(held_result{0, c, {}, {}, 0});  // refuses non-UTF-8 before anything is written
  const auto look_at = [text] { return std::pair{sha256_hex(text), measure(text)}; };
  std::pair<std::string, text_shape> seen;
  if (ch->place == text_place::in_file && !known_already(ch->key)) {
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
    ch->prewritten = texts_.write_unnamed(text);  // into the spare, when keep_spare_text() made one
    seen = looked_at.valid() ? looked_at.get() : look_at();
  } else {
    seen = look_at();
  }
  ch->held = held_result{0, c, std::move(seen.first), seen.second, unix_ms_now()};
  ch->text = text;
  return ch;
}

// A resend (held, being put, or delivered already) is answered from memory, or written by the
// writer once the first put is settled: its text is not written ahead, which would cost a write,
// an fsync and the spare file for nothing.
bool queue_core::known_already(const std::string& key) const {
  std::lock_guard lock(mutex_);
  return index_.holds(key) || putting_.contains(key) || tombstones_.find(key).has_value();
}

bool queue_core::has_spare_text() const { return texts_.has_spare(); }

bool queue_core::changes_waiting() const {
  std::lock_guard lock(mutex_);
  return stopping_ || !submitted_.empty();
}

void queue_core::keep_spare_text() {
  if (changes_waiting()) return;  // they go first (the next group's end tries again)
  texts_.keep_spare();            // none made: a put opens its own
}

void queue_core::keep_zeros_ahead() {
  // Changes are waiting: they go first, before and while the zeros are written. Under load the
  // writer seldom finds none waiting, and its groups extend the file as before: zeros laid down
  // between groups held them up (the load bench 15% slower) for a sync saved on groups that
  // were waiting anyway.
  if (changes_waiting()) return;
  // Skipped, interrupted or refused: the next groups extend the file. A window no larger than
  // a segment.
  journal_.zero_ahead(std::min(options_.zero_ahead_bytes, options_.segment_bytes),
                      [this] { return changes_waiting(); });
}

void queue_core::put_async(const completion& c, std::string_view final_text, put_callback done) {
  change_ptr ch;
  try {
    ch = make_put(c, final_text);
  } catch (...) {
    done(std::current_exception(), {});
    return;
  }
  ch->done = std::move(done);
  std::exception_ptr error;
  put_outcome answer;
  bool write_here = false;
  {
    std::lock_guard lock(mutex_);
    require_recovered();
    const held_result& h = ch->held;
    if (const queue_index::entry* held = index_.find(ch->key)) {
      if (held->held.sha256 != h.sha256) {
        error = std::make_exception_ptr(queue_conflict(describe(c) + " already completed with another final text"));
      } else {
        answer = {held->held, true, false};
      }
    } else if (const auto p = putting_.find(ch->key); p != putting_.end()) {
      p->second.push_back(ch);  // asked again once the first one is settled
      return;
    } else if (const auto t = tombstones_.find(ch->key)) {
      if (t->sha256 != h.sha256) {
        error = std::make_exception_ptr(queue_conflict(describe(c) + " was already delivered with another final text"));
      } else {
        answer = {held_result{t->seq, c, h.sha256, h.shape, 0}, true, true};
      }
    } else {
      ch->held.seq = next_seq_;
      const std::size_t text_bytes = ch->place == text_place::in_journal ? final_text.size() : 0;
      try {
        ch->heads.push_back(encode_entry_head(
            entry_kind::put, checked_meta(encode_put(ch->held, ch->place), "the record of " + describe(c)), text_bytes));
      } catch (...) {
        error = std::current_exception();
      }
      if (!error) {
        ++next_seq_;
        putting_[ch->key];
        if (writing_ || tidy_due_ || stopping_ || !submitted_.empty()) {
          submit(ch);
          return;
        }
        writing_ = true;  // the writer is idle: this thread writes it, once the lock is let go
        write_here = true;
      }
    }
  }
  if (write_here) {
    write_alone(std::move(ch));
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

bool queue_core::was_delivered(std::string_view parent_id, std::string_view child_id) const {
  const std::string key = completion_key(parent_id, child_id);
  std::lock_guard lock(mutex_);
  return tombstones_.find(key).has_value();
}

mapped_file queue_core::open_text(const held_result& r) const {
  {
    std::lock_guard lock(mutex_);
    const queue_index::entry* held = index_.find(r.seq);
    if (held == nullptr) {
      throw queue_error("the final text of result " + std::to_string(r.seq) + " is no longer in the queue");
    }
    // Read under the lock: the writer removes a segment only once nothing held is in it (and
    // this result is held), and copy_forward moves a location under the same lock. A text of up
    // to read_text_bytes is read, not mapped: the caller reads it whole, and a pread of 256 KiB
    // from the page cache is tens of µs (see mapped_file). A larger one is mapped, so that a
    // batch of many costs page cache, not the daemon's heap.
    const queue_index::location& where = held->where;
    if (where.place == text_place::in_journal)
      return mapped_file(journal_.segment_fd(where.segment), where.text_offset, r.shape.bytes,
                         r.shape.bytes <= pending_queue::read_text_bytes);
  }
  std::optional<mapped_file> text = texts_.open(r.sha256);
  if (!text) {
    throw queue_error("the final text of result " + std::to_string(r.seq) + " is no longer in the queue");
  }
  return std::move(*text);
}

std::optional<std::filesystem::path> queue_core::text_file(const held_result& r) const {
  std::lock_guard lock(mutex_);
  const queue_index::entry* held = index_.find(r.seq);
  if (held == nullptr || held->where.place != text_place::in_file) return std::nullopt;
  return texts_.path_of(r.sha256);
}

std::optional<handoff::text_file> queue_core::linkable_text(const held_result& r) const {
  std::lock_guard lock(mutex_);
  const queue_index::entry* held = index_.find(r.seq);
  if (held == nullptr || held->where.place != text_place::in_file) return std::nullopt;
  return handoff::text_file{texts_fd_.get(), r.sha256 + ".txt"};
}

std::vector<std::string> queue_core::held_texts() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  out.reserve(index_.results());
  index_.append_texts(out);
  tombstones_.append_recent_texts(out);
  return out;
}

bool queue_core::holds_text(std::string_view sha256) const {
  std::lock_guard lock(mutex_);
  return index_.uses_text(std::string(sha256)) || tombstones_.recent_text(sha256);
}

void queue_core::begin_delivery(const stored_delivery& d) {
  if (d.delivery_id.empty()) throw std::invalid_argument("a delivery needs an id");
  auto ch = std::make_shared<queue_change>();
  ch->what = queue_change::kind::delivery;
  ch->delivery = d;
  ch->heads.push_back(encode_entry_head(
      entry_kind::delivery, checked_meta(encode_delivery(d), "delivery " + d.delivery_id), 0));
  std::unique_lock lock(mutex_);
  require_recovered();
  submit(ch);
  settled_.wait(lock, [&] { return ch->finished; });
  if (ch->error) std::rethrow_exception(ch->error);
}

std::vector<std::string> queue_core::complete_delivery(std::string_view delivery_id) {
  std::vector<std::uint64_t> seqs;
  {
    std::lock_guard lock(mutex_);
    require_recovered();
    const stored_delivery* d = index_.delivery(std::string(delivery_id));
    if (d == nullptr) return {};
    seqs = d->seqs;
  }
  return retire_blocking(seqs, std::string(delivery_id));
}

std::vector<std::string> queue_core::consume(const std::vector<std::uint64_t>& seqs) {
  return retire_blocking(seqs, {});
}

// Memory lets go at once (nothing can consume a result twice); the disk follows with the group.
std::vector<std::string> queue_core::retire_blocking(const std::vector<std::uint64_t>& seqs, std::string ack_id) {
  auto ch = std::make_shared<queue_change>();
  ch->what = queue_change::kind::retire;
  const std::int64_t now = unix_ms_now();
  std::unique_lock lock(mutex_);
  require_recovered();
  for (const std::uint64_t seq : seqs) {
    auto r = index_.release(seq);
    if (!r) continue;  // unknown, or listed twice
    const tombstone t{r->e.held.sha256, seq, now};
    ch->heads.push_back(encode_entry_head(entry_kind::retire, encode_retire(r->key, t), 0));
    tombstones_.retiring(r->key, t);  // resends are recognised from now on
    ch->retired.push_back({std::move(r->key), t, r->e.where.segment, r->e.where.place});
  }
  if (!ack_id.empty()) {
    if (const auto segment = index_.end_delivery(ack_id)) {
      ch->ack_segment = *segment;
      ch->heads.push_back(encode_entry_head(entry_kind::acknowledged, encode_acknowledged(ack_id), 0));
      ch->ack_id = std::move(ack_id);
    }
  }
  if (ch->heads.empty()) return {};
  publish_stats();
  submit(ch);
  settled_.wait(lock, [&] { return ch->finished; });
  return ch->problems;
}

pending_queue::stats queue_core::statistics() const {
  std::lock_guard lock(stats_mutex_);
  return snapshot_;
}

void queue_core::publish_stats() noexcept {
  pending_queue::stats s;
  s.results = index_.results();
  s.text_bytes = index_.text_bytes();
  s.deliveries = index_.deliveries();
  s.tombstones = tombstones_.count();
  s.journal_bytes = journal_bytes_;
  s.groups = groups_;
  s.changes = changes_;
  std::lock_guard lock(stats_mutex_);
  snapshot_ = s;
}

std::size_t queue_core::expire_tombstones(std::chrono::seconds age) {
  const std::int64_t cutoff = unix_ms_now() - age.count() * 1000;
  std::size_t expired = 0;
  {
    std::lock_guard lock(mutex_);
    require_recovered();
    expired = tombstones_.expire_unwritten(cutoff);
    publish_stats();
  }
  // done/ is read without the lock: the writer only adds files, and a file written meanwhile
  // is too young to expire.
  const std::size_t removed_files = tombstones_.remove_files_up_to(cutoff);
  std::lock_guard lock(mutex_);
  tombstones_.expired(cutoff, removed_files);
  publish_stats();
  return expired + removed_files;
}

std::vector<std::string> queue_core::delivered_texts(std::int64_t since_unix_ms,
                                                     std::vector<std::string>& problems) const {
  return tombstones_.delivered_texts(since_unix_ms, problems);
}

// pending_queue: the contract (pending_queue.hpp) over the parts.

pending_queue::pending_queue(std::filesystem::path dir, queue_options options)
    : core_(std::make_unique<queue_core>(std::move(dir), options)) {}
pending_queue::~pending_queue() = default;

pending_queue::recovered pending_queue::recover(std::vector<std::string>* problems) {
  return core_->recover(problems);
}
void pending_queue::put_async(const completion& c, std::string_view final_text, put_callback done) {
  core_->put_async(c, final_text, std::move(done));
}
mapped_file pending_queue::open_text(const held_result& r) const { return core_->open_text(r); }
std::optional<std::filesystem::path> pending_queue::text_file(const held_result& r) const {
  return core_->text_file(r);
}
std::optional<handoff::text_file> pending_queue::linkable_text(const held_result& r) const {
  return core_->linkable_text(r);
}
std::vector<std::string> pending_queue::held_texts() const { return core_->held_texts(); }
bool pending_queue::holds_text(std::string_view sha256) const { return core_->holds_text(sha256); }
void pending_queue::begin_delivery(const stored_delivery& d) { core_->begin_delivery(d); }
std::vector<std::string> pending_queue::complete_delivery(std::string_view delivery_id) {
  return core_->complete_delivery(delivery_id);
}
std::vector<std::string> pending_queue::consume(const std::vector<std::uint64_t>& seqs) {
  return core_->consume(seqs);
}
bool pending_queue::was_delivered(std::string_view parent_id, std::string_view child_id) const {
  return core_->was_delivered(parent_id, child_id);
}
pending_queue::stats pending_queue::statistics() const { return core_->statistics(); }
bool pending_queue::has_spare_text() const { return core_->has_spare_text(); }
std::size_t pending_queue::expire_tombstones(std::chrono::seconds age) { return core_->expire_tombstones(age); }
std::vector<std::string> pending_queue::delivered_texts(std::int64_t since_unix_ms,
                                                        std::vector<std::string>& problems) const {
  return core_->delivered_texts(since_unix_ms, problems);
}
const std::filesystem::path& pending_queue::dir() const noexcept { return core_->dir(); }
const queue_options& pending_queue::options() const noexcept { return core_->options(); }

}  // namespace handoff
