// pending_queue (its contract: pending_queue.hpp) as the facade over its parts (queue_parts.hpp):
// making them, recover() first, and the lookups, each judged under the queue's one mutex. The
// changing calls are in pending_queue_changes.cpp.
#include "engine/queue/pending_queue.hpp"

#include <cerrno>
#include <fcntl.h>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <sys/file.h>

#include "engine/fs/private_dir.hpp"
#include "engine/queue/queue_change.hpp"
#include "engine/queue/queue_disk.hpp"
#include "engine/queue/queue_parts.hpp"
#include "engine/queue/queue_recovery.hpp"

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

std::string no_longer_held(const held_result& r) {
  return "the final text of result " + std::to_string(r.seq) + " is no longer in the queue";
}

}  // namespace

static_assert(pending_queue::expired_file == queue_tombstones::expired_file);

queue_parts::queue_parts(std::filesystem::path d, queue_options o, queue_writer::admit_again again)
    : dir(normalize_dir(d)),
      options(o),
      dir_fd(open_private_dir(dir, what_dir)),
      lock_fd(lock_queue(dir_fd.get(), dir)),
      texts(dir / "texts", when_moved::refuse, "queued text"),
      texts_fd(open_area(dir_fd.get(), dir, "texts")),
      tombstones(dir_fd.get(), dir),
      journal(dir_fd.get(), dir),
      compaction({mutex, index, tombstones, journal, stats}, options.segment_bytes, [this] { return next_seq; }),
      writer({mutex, index, tombstones, journal, texts, texts_fd.get(), stats, compaction, options}, std::move(again)) {}

// A put that waited behind the first put of its key is asked again, as the caller asked it.
pending_queue::pending_queue(std::filesystem::path dir, queue_options options)
    : parts_(std::make_unique<queue_parts>(std::move(dir), options, [this](std::shared_ptr<queue_change> c) {
        put_async(c->held.info, c->text, std::move(c->done));
      })) {}

// The writer stops here, before any part goes: the changes it still has may admit a resend again
// (through put_async), which needs every part whole.
pending_queue::~pending_queue() { parts_->writer.stop(); }

// Under the lock throughout: nothing else runs before it returns.
pending_queue::recovered pending_queue::recover(std::vector<std::string>* problems) {
  queue_parts& q = *parts_;
  std::lock_guard lock(q.mutex);
  if (q.recovered) throw std::logic_error("pending_queue::recover() called twice");
  std::vector<std::string> notes;
  std::uint64_t max_seq = 0;
  try {
    max_seq = queue_recovery({q.dir_fd.get(), q.dir, q.index, q.tombstones, q.journal, q.texts, q.texts_fd.get()})
                  .run(notes);
  } catch (const fs_error& e) {
    throw queue_error(std::string("cannot recover the queue in ") + q.dir.string() + ": " + e.what());
  }
  q.next_seq = max_seq + 1;
  q.recovered = true;
  q.stats.journal_is(q.journal.total_bytes());
  q.stats.publish(q.index, q.tombstones);
  recovered out{q.index.results_by_seq(), q.index.deliveries_in_order()};
  if (problems != nullptr) problems->insert(problems->end(), notes.begin(), notes.end());
  return out;
}

bool pending_queue::was_delivered(std::string_view parent_id, std::string_view child_id) const {
  const std::string key = completion_key(parent_id, child_id);
  std::lock_guard lock(parts_->mutex);
  return parts_->tombstones.find(key).has_value();
}

mapped_file pending_queue::open_text(const held_result& r) const {
  const queue_parts& q = *parts_;
  {
    std::lock_guard lock(q.mutex);
    const queue_index::entry* held = q.index.find(r.seq);
    if (held == nullptr) throw queue_error(no_longer_held(r));
    // Read under the lock: the writer removes a segment only once nothing held is in it (and
    // this result is held), and copy_forward moves a location under the same lock. A text of up
    // to read_text_bytes is read, not mapped: the caller reads it whole, and a pread of 256 KiB
    // from the page cache is tens of µs (see mapped_file). A larger one is mapped, so that a
    // batch of many costs page cache, not the daemon's heap.
    const queue_index::location& where = held->where;
    if (where.place == text_place::in_journal)
      return mapped_file(q.journal.segment_fd(where.segment), where.text_offset, r.shape.bytes,
                         r.shape.bytes <= read_text_bytes);
  }
  std::optional<mapped_file> text = q.texts.open(r.sha256);
  if (!text) throw queue_error(no_longer_held(r));
  return std::move(*text);
}

std::optional<std::filesystem::path> pending_queue::text_file(const held_result& r) const {
  std::lock_guard lock(parts_->mutex);
  const queue_index::entry* held = parts_->index.find(r.seq);
  if (held == nullptr || held->where.place != text_place::in_file) return std::nullopt;
  return parts_->texts.path_of(r.sha256);
}

std::optional<handoff::text_file> pending_queue::linkable_text(const held_result& r) const {
  std::lock_guard lock(parts_->mutex);
  const queue_index::entry* held = parts_->index.find(r.seq);
  if (held == nullptr || held->where.place != text_place::in_file) return std::nullopt;
  return handoff::text_file{parts_->texts_fd.get(), r.sha256 + ".txt"};
}

std::vector<std::string> pending_queue::held_texts() const {
  const queue_parts& q = *parts_;
  std::lock_guard lock(q.mutex);
  std::vector<std::string> out;
  out.reserve(q.index.results());
  q.index.append_texts(out);
  q.tombstones.append_recent_texts(out);
  return out;
}

bool pending_queue::holds_text(std::string_view sha256) const {
  std::lock_guard lock(parts_->mutex);
  return parts_->index.uses_text(std::string(sha256)) || parts_->tombstones.recent_text(sha256);
}

std::size_t pending_queue::expire_tombstones(std::chrono::seconds age) {
  queue_parts& q = *parts_;
  const std::int64_t cutoff = unix_ms_now() - age.count() * 1000;
  std::size_t expired = 0;
  {
    std::lock_guard lock(q.mutex);
    q.require_recovered();
    expired = q.tombstones.expire_unwritten(cutoff);
    q.stats.publish(q.index, q.tombstones);
  }
  // done/ is read without the lock: the writer only adds files, and a file written meanwhile
  // is too young to expire.
  const std::size_t removed_files = q.tombstones.remove_files_up_to(cutoff);
  std::lock_guard lock(q.mutex);
  q.tombstones.expired(cutoff, removed_files);
  q.stats.publish(q.index, q.tombstones);
  return expired + removed_files;
}

// What a part alone answers.
pending_queue::stats pending_queue::statistics() const { return parts_->stats.snapshot(); }
bool pending_queue::has_spare_text() const { return parts_->texts.has_spare(); }
std::vector<std::string> pending_queue::delivered_texts(std::int64_t since_unix_ms,
                                                        std::vector<std::string>& problems) const {
  return parts_->tombstones.delivered_texts(since_unix_ms, problems);
}
const std::filesystem::path& pending_queue::dir() const noexcept { return parts_->dir; }
const queue_options& pending_queue::options() const noexcept { return parts_->options; }

}  // namespace handoff
