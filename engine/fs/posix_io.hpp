// Small POSIX building blocks shared by the artifact store and the queue: an owning fd, an
// error that keeps its errno and reads as plain words, loops that finish reads and writes, and
// a check-before-trust open of an existing file.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace handoff {

// Owns one file descriptor; closes it on destruction. -1 means none.
class unique_fd {
 public:
  unique_fd() = default;
  explicit unique_fd(int fd) noexcept : fd_(fd) {}
  ~unique_fd() { reset(); }
  unique_fd(unique_fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  unique_fd& operator=(unique_fd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  int release() noexcept { return std::exchange(fd_, -1); }
  void reset(int fd = -1) noexcept;

 private:
  int fd_ = -1;
};

// A failed system call. what() reads "<strerror> while <doing>", e.g. "No space left on device
// while writing the artifact", so it can go straight into a footer or a log line.
class fs_error : public std::runtime_error {
 public:
  fs_error(int code, std::string_view doing);
  int code() const noexcept { return code_; }

 private:
  int code_;
};

// Writes all of `data` at fd's offset, resuming after short writes and EINTR. Throws fs_error.
void write_all(int fd, std::string_view data, std::string_view doing);

// Reads fd from offset 0 to its end, at most `max_bytes` bytes; a longer file throws fs_error
// (EFBIG). For small files of ours (records, tombstones).
std::string read_all(int fd, std::size_t max_bytes, std::string_view doing);

// True when the file open at `fd` holds exactly `expected`. Reads with pread in chunks rather
// than mapping, so a file shrunk meanwhile compares unequal instead of raising SIGBUS.
bool content_equals(int fd, std::string_view expected);

// fsync, retried on EINTR. Throws fs_error.
void sync_or_throw(int fd, std::string_view doing);

// What open_private_file found at a name.
struct private_file {
  enum class status { absent, ok, refused };
  status state = status::absent;
  unique_fd fd;        // open O_RDONLY when ok
  struct stat st {};   // its fstat when ok
  std::string reason;  // why it is not trusted, plain words, when refused
};

// Opens `name` in `dir_fd` read-only when it is a regular file owned by the effective uid with
// no group/other permission bits. Never follows a symlink (O_NOFOLLOW), never opens anything but
// a regular file (checked with fstatat first, so no FIFO or device is ever opened), and opens
// with O_NONBLOCK so a swap to a FIFO in between cannot block either. `shown` names the file in
// the reason. Errors other than "absent" come back as refused with the errno text.
private_file open_private_file(int dir_fd, const std::string& name, std::string_view shown);

// Gives the file open at `fd` (an anonymous O_TMPFILE one, or one with names already) the
// further name `name` in `dir_fd`: a hard link to that very inode, whatever happened to its
// other names since it was opened. Never replaces. Returns 0 or the errno (EEXIST: the name is
// taken; EXDEV: another filesystem; ENOENT: neither way below works here).
// linkat(AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH on most kernels; the /proc path works for
// anyone when /proc is mounted.
int link_open_file(int fd, int dir_fd, const std::string& name);

// Removes `name` from the directory open at `dir_fd` without following it; an absent name
// counts as removed. Returns "" or what went wrong, in plain words naming `shown`.
std::string remove_name(int dir_fd, const std::string& name, std::string_view shown);

// Best-effort fsync of a directory after removals: a removal lost to a crash is redone by the
// next recovery (or collection), so failing here loses nothing.
void sync_quietly(int dir_fd) noexcept;

// "0755" for the permission bits of `mode`.
std::string octal_mode(mode_t mode);

}  // namespace handoff
