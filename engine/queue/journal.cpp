#include "engine/queue/journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "engine/fs/atomic_file.hpp"
#include "engine/fs/private_dir.hpp"

namespace handoff {

namespace {

constexpr std::string_view suffix = ".log";

std::optional<std::uint64_t> parse_segment_name(std::string_view name) {
  if (name.size() != 16 + suffix.size() || !name.ends_with(suffix)) return std::nullopt;
  std::uint64_t n = 0;
  const char* end = name.data() + 16;
  const auto [p, ec] = std::from_chars(name.data(), end, n, 16);
  if (ec != std::errc() || p != end || n == 0) return std::nullopt;
  if (segment_name(n) != name) return std::nullopt;  // lowercase, zero-padded only
  return n;
}

// Opens an existing segment for reading and appending, trusting only a regular file of ours
// that nobody else may read (O_NOFOLLOW: a symlink is refused, never followed).
unique_fd open_segment(int dir_fd, const std::string& name, const std::filesystem::path& shown) {
  unique_fd fd(::openat(dir_fd, name.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) {
    throw std::runtime_error(errno == ELOOP ? "a symlink is at " + shown.string() + "; refusing to follow it"
                                            : std::string(fs_error(errno, "opening " + shown.string()).what()));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw std::runtime_error(fs_error(errno, "checking " + shown.string()).what());
  if (!S_ISREG(st.st_mode)) throw std::runtime_error(shown.string() + " is not a regular file");
  if (st.st_uid != ::geteuid()) throw std::runtime_error(shown.string() + " is not owned by us");
  if ((st.st_mode & 077) != 0) {
    throw std::runtime_error(shown.string() + " is mode " + octal_mode(st.st_mode) + ", open to group or others");
  }
  return fd;
}

std::size_t size_of(int fd, const std::filesystem::path& shown) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw std::runtime_error(fs_error(errno, "checking " + shown.string()).what());
  return static_cast<std::size_t>(st.st_size);
}

void data_sync(int fd, std::string_view doing) {
  while (::fdatasync(fd) != 0) {
    if (errno != EINTR) throw fs_error(errno, doing);
  }
}

}  // namespace

std::string segment_name(std::uint64_t number) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(number));
  return std::string(buf) + std::string(suffix);
}

journal::journal(int queue_fd, const std::filesystem::path& queue_dir)
    : dir_(queue_dir / "journal"), dir_fd_(open_private_subdir(queue_fd, "journal", dir_, "queue dir")) {
  for (const std::string& name : list_names(dir_fd_.get())) {
    const auto number = parse_segment_name(name);
    if (!number) {
      strangers_.push_back(name);
      continue;
    }
    segment s;
    s.fd = open_segment(dir_fd_.get(), name, dir_ / name);
    s.size = size_of(s.fd.get(), dir_ / name);
    s.file_bytes = s.size;  // until recovery finds where the entries end (end_at, cut)
    segments_.emplace(*number, std::move(s));
  }
}

std::vector<std::uint64_t> journal::segments() const {
  std::lock_guard lock(map_mutex_);
  std::vector<std::uint64_t> out;
  for (const auto& [n, s] : segments_) out.push_back(n);
  return out;
}

int journal::segment_fd(std::uint64_t number) const {
  std::lock_guard lock(map_mutex_);
  const auto it = segments_.find(number);
  return it == segments_.end() ? -1 : it->second.fd.get();
}

std::size_t journal::segment_size(std::uint64_t number) const {
  std::lock_guard lock(map_mutex_);
  const auto it = segments_.find(number);
  return it == segments_.end() ? 0 : it->second.size;
}

std::size_t journal::total_bytes() const {
  std::lock_guard lock(map_mutex_);
  std::size_t total = 0;
  for (const auto& [n, s] : segments_) total += s.size;
  return total;
}

void journal::cut(std::uint64_t number, std::size_t size) {
  segment& s = segments_.at(number);
  const std::string shown = "cutting " + (dir_ / segment_name(number)).string();
  if (::ftruncate(s.fd.get(), static_cast<off_t>(size)) != 0) throw fs_error(errno, shown);
  sync_or_throw(s.fd.get(), shown);
  std::lock_guard lock(map_mutex_);
  s.size = size;
  s.file_bytes = size;
}

void journal::end_at(std::uint64_t number, std::size_t size) {
  std::lock_guard lock(map_mutex_);
  segment& s = segments_.at(number);
  s.size = std::min(size, s.file_bytes);
}

void journal::start_appending() {
  if (segments_.empty()) {
    create(1);
  } else {
    active_ = segments_.rbegin()->first;
  }
}

void journal::create(std::uint64_t number) {
  const std::string name = segment_name(number);
  unique_fd fd(::openat(dir_fd_.get(), name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) throw fs_error(errno, "creating " + (dir_ / name).string());
  // The mode whatever the umask, and the name durable before anything in it is acknowledged.
  if (::fchmod(fd.get(), 0600) != 0 || ::fsync(dir_fd_.get()) != 0) {
    const int e = errno;
    ::unlinkat(dir_fd_.get(), name.c_str(), 0);
    throw fs_error(e, "creating " + (dir_ / name).string());
  }
  std::lock_guard lock(map_mutex_);
  segments_[number] = segment{std::move(fd), 0, 0};
  active_ = number;
  must_rotate_ = false;
}

// An entry written under a path the next start does not read would be lost then: the path
// must still lead to the directory we hold.
void journal::check_in_place() const {
  struct stat held {}, named {};
  const std::string doing = "checking that " + dir_.string() + " is still the journal handoffd opened";
  if (::fstat(dir_fd_.get(), &held) != 0) throw fs_error(errno, doing);
  if (::fstatat(AT_FDCWD, dir_.c_str(), &named, AT_SYMLINK_NOFOLLOW) != 0) throw fs_error(errno, doing + " (moved away?)");
  if (held.st_dev != named.st_dev || held.st_ino != named.st_ino) throw fs_error(ESTALE, doing + " (it was replaced)");
}

std::size_t journal::append(const std::vector<iovec>& pieces) {
  check_in_place();
  if (must_rotate_) create(active_ + 1);
  segment& s = segments_.at(active_);
  const std::size_t start = s.size;
  std::size_t at = start;
  try {
    for (std::size_t i = 0; i < pieces.size();) {
      const int count = static_cast<int>(std::min<std::size_t>(pieces.size() - i, IOV_MAX));
      std::vector<iovec> left(pieces.begin() + static_cast<std::ptrdiff_t>(i),
                              pieces.begin() + static_cast<std::ptrdiff_t>(i) + count);
      std::size_t first = 0;  // the first piece of `left` not yet written whole
      while (first < left.size()) {
        const ssize_t n = ::pwritev(s.fd.get(), left.data() + first, static_cast<int>(left.size() - first),
                                    static_cast<off_t>(at));
        if (n < 0) {
          if (errno == EINTR) continue;
          throw fs_error(errno, "writing the queue journal");
        }
        if (n == 0) throw fs_error(EIO, "writing the queue journal");
        at += static_cast<std::size_t>(n);
        for (std::size_t done = static_cast<std::size_t>(n); done > 0 && first < left.size();) {
          const std::size_t take = std::min(done, left[first].iov_len);
          left[first].iov_base = static_cast<char*>(left[first].iov_base) + take;
          left[first].iov_len -= take;
          done -= take;
          if (left[first].iov_len == 0) ++first;
        }
      }
      i += static_cast<std::size_t>(count);
    }
    data_sync(s.fd.get(), "syncing the queue journal");
  } catch (const fs_error&) {
    // Leave no bytes of a group nobody was told about; a segment we cannot cut is left behind.
    if (::ftruncate(s.fd.get(), static_cast<off_t>(start)) != 0 || ::fdatasync(s.fd.get()) != 0) {
      must_rotate_ = true;
      std::lock_guard lock(map_mutex_);
      s.size = at;
      s.file_bytes = std::max(s.file_bytes, at);
    } else {
      std::lock_guard lock(map_mutex_);
      s.file_bytes = start;
    }
    throw;
  }
  std::lock_guard lock(map_mutex_);
  s.size = at;
  s.file_bytes = std::max(s.file_bytes, at);
  return start;
}

bool journal::rotate_if_over(std::size_t bytes) {
  segment& old = segments_.at(active_);
  if (old.size < bytes) return false;
  create(active_ + 1);
  if (old.file_bytes > old.size && ::ftruncate(old.fd.get(), static_cast<off_t>(old.size)) == 0) {
    std::lock_guard lock(map_mutex_);
    old.file_bytes = old.size;
  }
  return true;
}

bool journal::zero_ahead(std::size_t bytes, const std::function<bool()>& interrupted) {
  segment& s = segments_.at(active_);
  if (bytes == 0 || s.file_bytes >= s.size + bytes / 2) return true;
  // Never on a disk short of space: the zeros would take what a text or an artifact needs.
  struct statvfs fs {};
  if (::fstatvfs(dir_fd_.get(), &fs) != 0 || fs.f_bavail * fs.f_frsize < zero_ahead_room * bytes) return false;
  static const std::string zeros(256 * 1024, '\0');
  const std::size_t from = s.file_bytes;
  const std::size_t until = s.size + bytes;
  std::size_t at = from;
  while (at < until && !interrupted()) {
    const ssize_t n = ::pwrite(s.fd.get(), zeros.data(), std::min(zeros.size(), until - at), static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    at += static_cast<std::size_t>(n);
  }
  if (at < until || ::fdatasync(s.fd.get()) != 0) {
    // The space goes back, and the zeros' dirty pages with it (a group's fdatasync would write
    // them out); zeros the cut leaves behind read as the end all the same.
    const bool given_back = ::ftruncate(s.fd.get(), static_cast<off_t>(from)) == 0;
    std::lock_guard lock(map_mutex_);
    s.file_bytes = given_back ? from : at;
    return false;
  }
  std::lock_guard lock(map_mutex_);
  s.file_bytes = at;
  return true;
}

void journal::remove(std::uint64_t number) {
  if (number == active_) throw std::logic_error("journal::remove: the active segment");
  const std::string name = segment_name(number);
  if (::unlinkat(dir_fd_.get(), name.c_str(), 0) != 0 && errno != ENOENT) {
    throw fs_error(errno, "removing " + (dir_ / name).string());
  }
  {
    std::lock_guard lock(map_mutex_);
    segments_.erase(number);
  }
  sync_or_throw(dir_fd_.get(), "syncing " + dir_.string());
}

}  // namespace handoff
