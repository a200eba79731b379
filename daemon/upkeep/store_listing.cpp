#include "upkeep/store_listing.hpp"

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

namespace handoff::daemon {
namespace {

// The directory's mtime (not following a symlink), or nullopt when it cannot be read.
std::optional<store_listing::clock::time_point> mtime_of(const std::filesystem::path& dir) {
  struct stat st {};
  if (::fstatat(AT_FDCWD, dir.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
    return std::nullopt;
  const auto since_epoch = std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec);
  return store_listing::clock::time_point(std::chrono::duration_cast<store_listing::clock::duration>(since_epoch));
}

// What changes a listing (entries come and go; a file's last write ends), and the end of the
// watched directory itself. IN_Q_OVERFLOW and IN_IGNORED (the watch is gone) come unasked.
constexpr std::uint32_t watched_events = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE |
                                         IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW;
constexpr std::uint32_t watch_ends = IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT;
// Bytes read from the watch at once: many events (16 bytes + a name each).
constexpr std::size_t event_buffer_bytes = 16 * 1024;

// Whether the events in `data` say the watch ended.
bool watch_ended(const char* data, std::size_t n) {
  for (std::size_t at = 0; at + sizeof(inotify_event) <= n;) {
    inotify_event e{};
    std::memcpy(&e, data + at, sizeof e);
    if ((e.mask & watch_ends) != 0) return true;
    at += sizeof(inotify_event) + e.len;
  }
  return false;
}

}  // namespace

void store_listing::watch(const std::filesystem::path& dir) {
  unique_fd fd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!fd || ::inotify_add_watch(fd.get(), dir.c_str(), watched_events) < 0) {
    spdlog::info("artifact store {}: cannot watch it ({}); daemon/status checks its mtime instead", dir.string(),
                 std::strerror(errno));
    return;
  }
  watch_ = std::move(fd);
  mtime_.reset();  // a listing kept before the watch began may have missed a change since
}

bool store_listing::unchanged_since_last_read() {
  alignas(inotify_event) char buffer[event_buffer_bytes];
  bool unchanged = true;
  for (;;) {
    const ssize_t n = ::read(watch_.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return unchanged;
    if (n <= 0 || watch_ended(buffer, static_cast<std::size_t>(n))) {
      spdlog::info("artifact store: its watch ended ({}); daemon/status checks its mtime from now on",
                   n < 0 ? std::strerror(errno) : "the directory moved or was removed");
      watch_.reset();
      return false;
    }
    unchanged = false;  // and read on: the queue is emptied, so the next call starts afresh
  }
}

std::optional<rpc::store_status> store_listing::reuse(const std::filesystem::path& dir) {
  if (watch_) {
    if (!unchanged_since_last_read()) mtime_.reset();
    if (watch_ && mtime_) return listing_;
  }
  if (!mtime_) return std::nullopt;
  const auto mtime = mtime_of(dir);
  if (!mtime || *mtime != *mtime_) return std::nullopt;
  return listing_;
}

void store_listing::keep(const std::filesystem::path& dir, const rpc::store_status& listing,
                         clock::time_point listed_at) {
  mtime_.reset();
  if (listing.error) return;  // ask the disk again next time
  if (watch_ && !unchanged_since_last_read()) return;  // changed while listed
  const auto mtime = mtime_of(dir);
  // A change after the listing started would have a later mtime than listed_at - settle.
  if (!mtime || listed_at < *mtime + settle) return;
  mtime_ = mtime;
  listing_ = listing;
}

}  // namespace handoff::daemon
