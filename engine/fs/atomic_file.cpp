#include "engine/fs/atomic_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <optional>

#include "engine/fs/posix_io.hpp"

namespace handoff {

namespace {

// ".tmp-" + 16 hex digits. getrandom makes names unguessable, so a file planted in advance
// cannot sit on the name (O_EXCL would refuse it anyway); pid and a counter are the fallback.
std::string temp_name() {
  static std::atomic<std::uint64_t> counter{0};
  std::uint64_t r = 0;
  if (::getrandom(&r, sizeof r, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof r)) {
    r = (static_cast<std::uint64_t>(::getpid()) << 32) ^ counter.fetch_add(1);
  }
  std::array<char, 17> hex{};
  std::snprintf(hex.data(), hex.size(), "%016llx", static_cast<unsigned long long>(r));
  return std::string(temp_prefix) + hex.data();
}

// Removes a named temp file when the write does not get to publish it.
class temp_guard {
 public:
  temp_guard(int dir_fd, std::string name) : dir_fd_(dir_fd), name_(std::move(name)) {}
  ~temp_guard() { remove(); }
  temp_guard(const temp_guard&) = delete;
  temp_guard& operator=(const temp_guard&) = delete;
  void remove() noexcept {
    if (!name_.empty()) ::unlinkat(dir_fd_, name_.c_str(), 0);
    name_.clear();
  }
  void release() noexcept { name_.clear(); }
  const std::string& name() const noexcept { return name_; }

 private:
  int dir_fd_;
  std::string name_;
};

// The bytes, then the mode (fchmod: independent of the umask), then fsync, before any name
// points at the file.
void fill(int fd, std::string_view bytes, std::string_view what, when_synced sync) {
  const std::string w(what);
  write_all(fd, bytes, "writing " + w);
  if (::fchmod(fd, 0600) != 0) throw fs_error(errno, "setting the mode of " + w);
  if (sync == when_synced::before_return) sync_or_throw(fd, "syncing " + w);
}

// Errors with which a kernel or filesystem says "no O_TMPFILE here".
bool tmpfile_unsupported(int err) { return err == EOPNOTSUPP || err == EISDIR || err == EINVAL; }

// O_TMPFILE path: the file has no name until it is complete, so a crash leaves nothing.
// `fd`: the one made ahead, or nullopt to make one here. Returns nullopt when it cannot be used
// here (then the caller takes the named path).
std::optional<bool> publish_anonymous(int dir_fd, const std::string& name, std::string_view bytes,
                                      std::string_view what, when_synced sync, std::optional<unique_fd> fd) {
  if (!fd) fd = open_unnamed(dir_fd, what);
  if (!fd) return std::nullopt;
  fill(fd->get(), bytes, what, sync);
  const int err = link_open_file(fd->get(), dir_fd, name);
  if (err == EEXIST) return false;
  if (err == ENOENT) return std::nullopt;  // no /proc and no capability: use a named temp
  if (err != 0) throw fs_error(err, "publishing " + std::string(what));
  return true;
}

// Named temp path: O_CREAT|O_EXCL|O_NOFOLLOW never reuses or follows anything planted.
bool publish_named(int dir_fd, const std::string& name, std::string_view bytes,
                   publish_mode mode, std::string_view what, when_synced sync) {
  const std::string w(what);
  unique_fd fd;
  std::string tmp;
  // A collision of 64 random bits means something is wrong; a few tries are plenty.
  for (int attempt = 0; !fd; ++attempt) {
    tmp = temp_name();
    fd.reset(::openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                      0600));
    if (!fd && (errno != EEXIST || attempt == 4)) {
      throw fs_error(errno, "creating a temp file for " + w);
    }
  }
  temp_guard guard(dir_fd, tmp);
  fill(fd.get(), bytes, what, sync);
  if (mode == publish_mode::replace) {
    if (::renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0) {
      throw fs_error(errno, "publishing " + w);
    }
    guard.release();
    return true;
  }
  if (::renameat2(dir_fd, tmp.c_str(), dir_fd, name.c_str(), RENAME_NOREPLACE) == 0) {
    guard.release();
    return true;
  }
  if (errno == EEXIST) return false;
  if (errno != EINVAL && errno != ENOSYS) throw fs_error(errno, "publishing " + w);
  // No RENAME_NOREPLACE on this filesystem: a hard link never replaces either; the temp name
  // is removed right after, by the guard.
  if (::linkat(dir_fd, tmp.c_str(), dir_fd, name.c_str(), 0) != 0) {
    if (errno == EEXIST) return false;
    throw fs_error(errno, "publishing " + w);
  }
  guard.remove();
  return true;
}

}  // namespace

std::optional<unique_fd> open_unnamed(int dir_fd, std::string_view what) {
  unique_fd fd(::openat(dir_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600));
  if (!fd) {
    if (tmpfile_unsupported(errno)) return std::nullopt;
    throw fs_error(errno, "creating a temp file for " + std::string(what));
  }
  return fd;
}

void fill_unnamed(int fd, std::string_view bytes, std::string_view what) {
  fill(fd, bytes, what, when_synced::before_return);
}

bool write_file_atomically(int dir_fd, const std::string& name, std::string_view bytes,
                           publish_mode mode, std::string_view what, temp_method method,
                           when_synced sync, std::optional<unique_fd> unnamed) {
  std::optional<bool> published;
  if (method == temp_method::automatic && mode == publish_mode::no_replace) {
    published = publish_anonymous(dir_fd, name, bytes, what, sync, std::move(unnamed));
  }
  if (!published) published = publish_named(dir_fd, name, bytes, mode, what, sync);
  if (!*published) return false;
  // The new name is durable only once the directory entry is.
  if (sync == when_synced::before_return) sync_or_throw(dir_fd, "syncing the directory of " + std::string(what));
  return true;
}

std::vector<std::string> list_names(int dir_fd) {
  // A fresh open file description: readdir must not share an offset with dir_fd.
  const int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw fs_error(errno, "listing a directory");
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    const int err = errno;
    ::close(fd);
    throw fs_error(err, "listing a directory");
  }
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* e = ::readdir(dir)) {
    const std::string_view n = e->d_name;
    if (n != "." && n != "..") names.emplace_back(n);
  }
  const int err = errno;
  ::closedir(dir);
  if (err != 0) throw fs_error(err, "listing a directory");
  return names;
}

}  // namespace handoff
