#include "engine/fs/posix_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace handoff {

void unique_fd::reset(int fd) noexcept {
  // close() is not retried on EINTR: on Linux the descriptor is released either way.
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

fs_error::fs_error(int code, std::string_view doing)
    : std::runtime_error(std::string(std::strerror(code)) + " while " + std::string(doing)),
      code_(code) {}

void write_all(int fd, std::string_view data, std::string_view doing) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw fs_error(errno, doing);
    }
    // write() returning 0 for a non-empty buffer means no progress is possible; treat it as
    // the disk being full rather than spinning.
    if (n == 0) throw fs_error(ENOSPC, doing);
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::string read_all(int fd, std::size_t max_bytes, std::string_view doing) {
  std::string out;
  std::array<char, 64 * 1024> buf{};
  for (;;) {
    const ssize_t n = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(out.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw fs_error(errno, doing);
    }
    if (n == 0) return out;
    if (out.size() + static_cast<std::size_t>(n) > max_bytes) throw fs_error(EFBIG, doing);
    out.append(buf.data(), static_cast<std::size_t>(n));
  }
}

bool content_equals(int fd, std::string_view expected) {
  std::array<char, 64 * 1024> buf{};
  std::size_t offset = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    const auto got = static_cast<std::size_t>(n);
    if (got == 0) return offset == expected.size();
    if (got > expected.size() - offset) return false;
    if (std::memcmp(buf.data(), expected.data() + offset, got) != 0) return false;
    offset += got;
  }
}

int link_open_file(int fd, int dir_fd, const std::string& name) {
  if (::linkat(fd, "", dir_fd, name.c_str(), AT_EMPTY_PATH) == 0) return 0;
  if (errno != ENOENT && errno != EPERM) return errno;
  std::array<char, 32> proc{};
  std::snprintf(proc.data(), proc.size(), "/proc/self/fd/%d", fd);
  if (::linkat(AT_FDCWD, proc.data(), dir_fd, name.c_str(), AT_SYMLINK_FOLLOW) == 0) return 0;
  return errno;
}

void sync_or_throw(int fd, std::string_view doing) {
  while (::fsync(fd) != 0) {
    if (errno != EINTR) throw fs_error(errno, doing);
  }
}

std::string octal_mode(mode_t mode) {
  std::array<char, 8> buf{};
  std::snprintf(buf.data(), buf.size(), "%04o", static_cast<unsigned>(mode & 07777));
  return buf.data();
}

namespace {

std::string describe_type(mode_t mode) {
  if (S_ISLNK(mode)) return "a symlink";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "a special file";
}

// The checks every trusted file passes, on an lstat-like or fstat result.
std::string untrusted_reason(const struct stat& st, std::string_view shown) {
  const std::string name(shown);
  if (S_ISLNK(st.st_mode)) return "a symlink is at " + name + "; refusing to follow it";
  if (!S_ISREG(st.st_mode)) {
    return describe_type(st.st_mode) + " is at " + name + ", not a regular file; leaving it alone";
  }
  if (st.st_uid != ::geteuid()) {
    return name + " is owned by uid " + std::to_string(st.st_uid) + ", not by us (uid " +
           std::to_string(::geteuid()) + "); refusing to trust it";
  }
  if ((st.st_mode & 077) != 0) {
    return name + " is mode " + octal_mode(st.st_mode) +
           ", open to group or others; refusing to trust it";
  }
  return {};
}

}  // namespace

private_file open_private_file(int dir_fd, const std::string& name, std::string_view shown) {
  private_file out;
  struct stat before {};
  if (::fstatat(dir_fd, name.c_str(), &before, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return out;
    out.state = private_file::status::refused;
    out.reason = fs_error(errno, "checking " + std::string(shown)).what();
    return out;
  }
  out.state = private_file::status::refused;
  if (auto why = untrusted_reason(before, shown); !why.empty()) {
    out.reason = std::move(why);
    return out;
  }
  // The name may have been swapped since fstatat: O_NOFOLLOW refuses a symlink (ELOOP),
  // O_NONBLOCK keeps a FIFO from blocking, and the fstat below re-checks what we really got.
  out.fd.reset(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!out.fd) {
    if (errno == ENOENT) return private_file{};
    out.reason = errno == ELOOP ? "a symlink is at " + std::string(shown) + "; refusing to follow it"
                                : fs_error(errno, "opening " + std::string(shown)).what();
    return out;
  }
  if (::fstat(out.fd.get(), &out.st) != 0) {
    out.reason = fs_error(errno, "checking " + std::string(shown)).what();
    out.fd.reset();
    return out;
  }
  if (auto why = untrusted_reason(out.st, shown); !why.empty()) {
    out.reason = std::move(why);
    out.fd.reset();
    return out;
  }
  out.state = private_file::status::ok;
  return out;
}

std::string remove_name(int dir_fd, const std::string& name, std::string_view shown) {
  if (::unlinkat(dir_fd, name.c_str(), 0) == 0 || errno == ENOENT) return {};
  return fs_error(errno, "removing " + std::string(shown)).what();
}

void sync_quietly(int dir_fd) noexcept {
  while (::fsync(dir_fd) != 0 && errno == EINTR) {
  }
}

}  // namespace handoff
