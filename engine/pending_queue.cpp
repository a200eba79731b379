#include "engine/pending_queue.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_set>

#include "engine/atomic_file.hpp"
#include "engine/private_dir.hpp"
#include "engine/queue_disk.hpp"
#include "engine/queue_files.hpp"
#include "engine/sha256.hpp"

namespace handoff {

namespace {

constexpr std::string_view what_dir = "queue dir";

unique_fd open_area(int queue_fd, const std::filesystem::path& queue_dir, const char* name) {
  return open_private_subdir(queue_fd, name, queue_dir / name, what_dir);
}

std::string describe(const completion& c) {
  return "child \"" + c.child_id + "\" of parent \"" + c.parent_id + "\"";
}

}  // namespace

// The queue directory is checked (ours, 0700, not a symlink) before anything is created in it.
pending_queue::pending_queue(std::filesystem::path dir)
    : dir_(normalize_dir(dir)),
      dir_fd_(open_private_dir(dir_, what_dir)),
      texts_(dir_ / "texts", when_moved::refuse, "queued text"),
      texts_fd_(open_area(dir_fd_.get(), dir_, "texts")),
      records_fd_(open_area(dir_fd_.get(), dir_, "records")),
      deliveries_fd_(open_area(dir_fd_.get(), dir_, "deliveries")),
      done_fd_(open_area(dir_fd_.get(), dir_, "done")) {}

pending_queue::~pending_queue() = default;

void pending_queue::require_recovered() const {
  if (!recovered_) throw std::logic_error("pending_queue: call recover() before using the queue");
}

pending_queue::put_outcome pending_queue::put(const completion& c, std::string_view final_text) {
  // Hashing and measuring need no shared state: done before taking the lock.
  const std::string key = completion_key(c.parent_id, c.child_id);
  const std::string sha = sha256_hex(final_text);
  const text_shape shape = measure(final_text);

  std::lock_guard lock(mutex_);
  const publish_on_exit publish{*this};
  require_recovered();
  if (const auto it = by_key_.find(key); it != by_key_.end()) {
    if (it->second.held.sha256 != sha) {
      throw queue_conflict(describe(c) + " already completed with another final text");
    }
    return {it->second.held, true, false};
  }
  if (const auto t = find_tombstone(key)) {
    if (t->sha256 != sha) {
      throw queue_conflict(describe(c) + " was already delivered with another final text");
    }
    return {held_result{t->seq, c, sha, shape, 0}, true, true};
  }

  const held_result held{next_seq_, c, sha, shape, unix_ms_now()};
  const std::string record = encode_record(held);  // refuses non-UTF-8 before any write
  if (record.size() > max_queue_file_bytes) {
    throw std::invalid_argument("the record of " + describe(c) + " would exceed " +
                                std::to_string(max_queue_file_bytes) + " bytes");
  }
  // The text first: a record on disk always has its text.
  const artifact_ref text = texts_.save(final_text, sha);
  if (!text.saved) throw queue_error("the final text was not stored: " + text.error);
  const std::string name = record_file_name(key);
  try {
    write_file_atomically(records_fd_.get(), name, record, publish_mode::replace,
                          "the queue record");
  } catch (const fs_error& e) {
    // Leave nothing behind: no record (its directory fsync may be what failed), and the text
    // only while another record uses it.
    remove_name(records_fd_.get(), name, name);
    if (!text_refs_.contains(sha)) remove_name(texts_fd_.get(), sha + ".txt", sha);
    throw queue_error(std::string("the completion was not stored: ") + e.what());
  }
  ++next_seq_;
  by_key_.emplace(key, entry{held});
  key_by_seq_.emplace(held.seq, key);
  ++text_refs_[sha];
  return {held, false, false};
}

bool pending_queue::was_delivered(std::string_view parent_id, std::string_view child_id) const {
  const std::string key = completion_key(parent_id, child_id);
  std::lock_guard lock(mutex_);
  return find_tombstone(key).has_value();
}

std::optional<tombstone> pending_queue::find_tombstone(const std::string& key) const {
  if (const auto it = unwritten_tombstones_.find(key); it != unwritten_tombstones_.end()) return it->second;
  std::string why;
  const auto bytes = read_queue_file(done_fd_.get(), key, "done/" + key, why);
  return bytes ? decode_tombstone(*bytes, why) : std::nullopt;
}

mapped_file pending_queue::open_text(const held_result& r) const {
  // Reads through the directory opened at start (texts_ never reopens it): no queue lock needed.
  std::optional<mapped_file> text = texts_.open(r.sha256);
  if (!text) {
    throw queue_error("the final text of result " + std::to_string(r.seq) +
                      " is no longer in the queue");
  }
  return std::move(*text);
}

std::filesystem::path pending_queue::text_path(std::string_view sha256) const {
  return texts_.path_of(sha256);
}

void pending_queue::begin_delivery(const stored_delivery& d) {
  if (d.delivery_id.empty()) throw std::invalid_argument("a delivery needs an id");
  const std::string bytes = encode_delivery(d);
  if (bytes.size() > max_queue_file_bytes) {
    throw std::invalid_argument("delivery " + d.delivery_id + " would exceed " +
                                std::to_string(max_queue_file_bytes) + " bytes");
  }
  std::lock_guard lock(mutex_);
  const publish_on_exit publish{*this};
  require_recovered();
  try {
    write_file_atomically(deliveries_fd_.get(), delivery_file_name(d.delivery_id), bytes,
                          publish_mode::replace, "the delivery record");
  } catch (const fs_error& e) {
    throw queue_error(std::string("the delivery was not recorded: ") + e.what());
  }
  deliveries_[d.delivery_id] = d;
}

std::vector<std::string> pending_queue::complete_delivery(std::string_view delivery_id) {
  std::lock_guard lock(mutex_);
  const publish_on_exit publish{*this};
  require_recovered();
  const auto it = deliveries_.find(std::string(delivery_id));
  if (it == deliveries_.end()) return {};
  std::vector<std::string> keys;
  for (const std::uint64_t seq : it->second.seqs) {
    if (const auto k = key_by_seq_.find(seq); k != key_by_seq_.end()) keys.push_back(k->second);
  }
  // Tombstones first, then the delivery: a crash in between only leaves a delivery whose
  // results are gone, which recovery drops.
  std::vector<std::string> failures = retire(keys);
  const std::string name = delivery_file_name(delivery_id);
  if (std::string err = remove_name(deliveries_fd_.get(), name, "deliveries/" + name);
      !err.empty()) {
    failures.push_back(std::move(err));
  }
  sync_quietly(deliveries_fd_.get());
  deliveries_.erase(it);
  return failures;
}

std::vector<std::string> pending_queue::consume(const std::vector<std::uint64_t>& seqs) {
  std::lock_guard lock(mutex_);
  const publish_on_exit publish{*this};
  require_recovered();
  std::vector<std::string> keys;
  for (const std::uint64_t seq : seqs) {
    if (const auto k = key_by_seq_.find(seq); k != key_by_seq_.end()) keys.push_back(k->second);
  }
  return retire(keys);
}

// Each result leaves as: tombstone written (fsynced), then record and unused text removed.
// A crash between the two leaves a record and its tombstone; recovery lets the tombstone win.
std::vector<std::string> pending_queue::retire(const std::vector<std::string>& keys) {
  std::vector<std::string> failures;
  const std::int64_t now = unix_ms_now();
  for (const std::string& key : keys) {
    const auto it = by_key_.find(key);
    if (it == by_key_.end()) continue;  // listed twice
    const held_result held = std::move(it->second.held);
    by_key_.erase(it);
    key_by_seq_.erase(held.seq);
    const tombstone t{held.sha256, held.seq, now};
    auto refs = text_refs_.find(held.sha256);
    const bool last_use = refs != text_refs_.end() && --refs->second == 0;
    if (last_use) text_refs_.erase(refs);
    try {
      write_file_atomically(done_fd_.get(), key, encode_tombstone(t), publish_mode::replace,
                            "a tombstone");
      ++tombstone_count_;
    } catch (const fs_error& e) {
      unwritten_tombstones_[key] = t;  // resends are still recognised while we run
      // Keep the record (and its text) on disk: after a restart it is delivered again.
      failures.push_back("result " + std::to_string(held.seq) + " stays on disk and will be " +
                         "delivered again after a restart: " + e.what());
      continue;
    }
    const std::string record = record_file_name(key);
    if (std::string err = remove_name(records_fd_.get(), record, "records/" + record);
        !err.empty()) {
      failures.push_back(std::move(err));
    }
    if (last_use) {
      const std::string text = held.sha256 + ".txt";
      if (std::string err = remove_name(texts_fd_.get(), text, "texts/" + text); !err.empty()) {
        failures.push_back(std::move(err));
      }
    }
  }
  if (!keys.empty()) {
    sync_quietly(records_fd_.get());
    sync_quietly(texts_fd_.get());
  }
  return failures;
}

pending_queue::stats pending_queue::statistics() const {
  std::lock_guard lock(stats_mutex_);
  return snapshot_;
}

void pending_queue::publish_stats() noexcept {
  stats s;
  s.results = by_key_.size();
  try {
    std::unordered_set<std::string_view> counted;
    for (const auto& [key, e] : by_key_) {
      if (counted.insert(e.held.sha256).second) s.text_bytes += e.held.shape.bytes;
    }
  } catch (const std::bad_alloc&) {
    std::lock_guard lock(stats_mutex_);
    s.text_bytes = snapshot_.text_bytes;  // out of memory: keep the last byte count
  }
  s.deliveries = deliveries_.size();
  s.tombstones = tombstone_count_ + unwritten_tombstones_.size();
  std::lock_guard lock(stats_mutex_);
  snapshot_ = s;
}

std::size_t pending_queue::expire_tombstones(std::chrono::seconds age) {
  std::lock_guard lock(mutex_);
  const publish_on_exit publish{*this};
  require_recovered();
  const std::int64_t cutoff = unix_ms_now() - age.count() * 1000;
  std::size_t expired = 0;
  std::erase_if(unwritten_tombstones_, [&](const auto& kv) {
    const bool old = kv.second.done_unix_ms <= cutoff;
    expired += old ? 1 : 0;
    return old;
  });
  std::size_t removed_files = 0;
  for (const std::string& name : list_names(done_fd_.get())) {
    if (!hash_stem(name, "")) continue;  // temp files and strangers: recovery's business
    // One that cannot be read or removed stays, and is tried again next time.
    std::string why;
    const auto bytes = read_queue_file(done_fd_.get(), name, "", why);
    const auto t = bytes ? decode_tombstone(*bytes, why) : std::nullopt;
    if (t && t->done_unix_ms <= cutoff && remove_name(done_fd_.get(), name, "").empty()) ++removed_files;
  }
  tombstone_count_ -= std::min(tombstone_count_, removed_files);
  if (removed_files != 0) sync_quietly(done_fd_.get());
  return expired + removed_files;
}

}  // namespace handoff
