// Tombstones: done/ files, and the few kept in memory while their file is not (yet) there.
#include "engine/queue/queue_tombstones.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "engine/fs/atomic_file.hpp"
#include "engine/fs/private_dir.hpp"
#include "engine/queue/queue_disk.hpp"
#include "engine/queue/queue_files.hpp"

namespace handoff {

queue_tombstones::queue_tombstones(int queue_fd, std::filesystem::path queue_dir)
    : queue_dir_(std::move(queue_dir)),
      queue_fd_(queue_fd),
      done_fd_(open_private_subdir(queue_fd, "done", queue_dir_ / "done", "queue dir")) {}

std::optional<tombstone> queue_tombstones::find(const std::string& key) const {
  if (const auto it = recent_.find(key); it != recent_.end()) return it->second;
  if (const auto it = unwritten_.find(key); it != unwritten_.end()) return it->second;
  if (const auto it = unfiled_.find(key); it != unfiled_.end()) return it->second;
  std::string why;
  const auto bytes = read_queue_file(done_fd_.get(), key, "done/" + key, why);
  return bytes ? decode_tombstone(*bytes, why) : std::nullopt;
}

void queue_tombstones::retiring(const std::string& key, const tombstone& t) { recent_[key] = t; }

void queue_tombstones::retire_refused(const std::string& key, const tombstone& t) {
  recent_.erase(key);
  unwritten_[key] = t;
}

void queue_tombstones::filed(const std::vector<keyed>& retired, std::size_t written, const std::vector<keyed>& refused) {
  files_ += written;
  for (const auto& [key, t] : refused) unfiled_[key] = t;  // the journal has it; retried
  for (const auto& [key, t] : retired) recent_.erase(key);
}

std::vector<queue_tombstones::keyed> queue_tombstones::unfiled() const { return {unfiled_.begin(), unfiled_.end()}; }

bool queue_tombstones::refiled(const std::vector<keyed>& again, std::size_t written, const std::vector<keyed>& refused) {
  files_ += written;
  for (const auto& [key, t] : again) {
    const bool still_refused =
        std::any_of(refused.begin(), refused.end(), [&key = key](const keyed& r) { return r.first == key; });
    if (!still_refused) unfiled_.erase(key);
  }
  return unfiled_.empty();
}

std::size_t queue_tombstones::count() const noexcept {
  return files_ + recent_.size() + unwritten_.size() + unfiled_.size();
}

void queue_tombstones::append_recent_texts(std::vector<std::string>& out) const {
  for (const auto& [key, t] : recent_) out.push_back(t.sha256);
}

bool queue_tombstones::recent_text(std::string_view sha256) const {
  return std::any_of(recent_.begin(), recent_.end(), [&](const auto& kv) { return kv.second.sha256 == sha256; });
}

std::size_t queue_tombstones::expire_unwritten(std::int64_t cutoff_ms) {
  return std::erase_if(unwritten_, [&](const auto& kv) { return kv.second.done_unix_ms <= cutoff_ms; });
}

void queue_tombstones::expired(std::int64_t cutoff_ms, std::size_t removed_files) {
  expired_before_ms_ = std::max(expired_before_ms_, cutoff_ms);
  files_ -= std::min(files_, removed_files);
}

std::size_t queue_tombstones::write_files(const std::vector<keyed>& retired, std::vector<keyed>& refused,
                                          std::vector<std::string>* why) {
  std::size_t written = 0;
  for (const auto& [key, t] : retired) {
    try {
      write_file_atomically(done_fd_.get(), key, encode_tombstone(t), publish_mode::replace, "a tombstone",
                            temp_method::automatic, when_synced::by_caller);
      ++written;
      unsynced_.push_back(key);
    } catch (const fs_error& e) {
      refused.emplace_back(key, t);
      if (why != nullptr) why->push_back(e.what());
    }
  }
  return written;
}

void queue_tombstones::sync_files() {
  if (unsynced_.empty()) return;
  for (const std::string& key : unsynced_) {
    private_file f = open_private_file(done_fd_.get(), key, "done/" + key);
    if (f.state == private_file::status::ok) sync_quietly(f.fd.get());
  }
  sync_quietly(done_fd_.get());
  unsynced_.clear();
}

std::size_t queue_tombstones::remove_files_up_to(std::int64_t cutoff_ms) {
  std::size_t removed = 0;
  for (const std::string& name : list_names(done_fd_.get())) {
    if (!hash_stem(name, "")) continue;  // temp files and strangers: recovery's business
    // One that cannot be read or removed stays, and is tried again next time.
    std::string why;
    const auto bytes = read_queue_file(done_fd_.get(), name, "", why);
    const auto t = bytes ? decode_tombstone(*bytes, why) : std::nullopt;
    if (t && t->done_unix_ms <= cutoff_ms && remove_name(done_fd_.get(), name, "").empty()) ++removed;
  }
  if (removed != 0) sync_quietly(done_fd_.get());
  // Recovery rewrites tombstone files from retire entries still in the journal: it must not
  // bring back what expired. Best effort: if this fails, a restart recognises those resends a
  // while longer.
  try {
    write_file_atomically(queue_fd_, std::string(expired_file), std::to_string(cutoff_ms), publish_mode::replace,
                          "the tombstone expiry time");
  } catch (const fs_error&) {
  }
  return removed;
}

std::vector<std::string> queue_tombstones::delivered_texts(std::int64_t since_unix_ms,
                                                           std::vector<std::string>& problems) const {
  std::vector<std::string> texts;
  // Opened without creating it: if it is gone there is nothing in it to protect.
  const auto done_path = queue_dir_ / "done";
  const unique_fd done(::open(done_path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!done) return texts;
  for (const std::string& name : list_names(done.get())) {
    if (name.starts_with(temp_prefix)) continue;
    std::string why;
    const auto bytes = read_queue_file(done.get(), name, "done/" + name, why);
    if (!bytes) continue;  // expired meanwhile, or not a file of ours: nothing it points to
    const auto t = decode_tombstone(*bytes, why);
    if (!t) {
      problems.push_back("queue tombstone done/" + name + " is unreadable (" + why + "); ignored");
      continue;
    }
    if (t->done_unix_ms >= since_unix_ms) texts.push_back(t->sha256);
  }
  return texts;
}

void queue_tombstones::count_files(std::vector<std::string>& notes) {
  for (const std::string& name : names_after_temps(done_fd_.get(), "done", notes)) {
    if (!is_sha256_hex(name)) {
      notes.push_back("left alone done/" + name + ": not a file the queue writes");
      continue;
    }
    ++files_;
  }
}

bool queue_tombstones::has_file(const std::string& key) const {
  return ::faccessat(done_fd_.get(), key.c_str(), F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

bool queue_tombstones::lacks_file(const std::string& key) const {
  return ::faccessat(done_fd_.get(), key.c_str(), F_OK, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT;
}

std::int64_t queue_tombstones::load_expiry() {
  std::string why;
  if (const auto cutoff = read_queue_file(queue_fd_, std::string(expired_file), std::string(expired_file), why))
    expired_before_ms_ = std::atoll(cutoff->c_str());
  return expired_before_ms_;
}

void queue_tombstones::refile_from_journal(const std::vector<keyed>& missing, std::vector<std::string>& notes) {
  std::vector<keyed> refused;
  std::vector<std::string> why_refused;
  files_ += write_files(missing, refused, &why_refused);
  for (const auto& [key, t] : refused) unfiled_[key] = t;  // retried before any segment goes
  for (const std::string& reason : why_refused)
    notes.push_back("a tombstone could not be written again (kept in memory, tried again): " + reason);
  sync_files();
}

}  // namespace handoff
