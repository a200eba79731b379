#include "disk_floor.hpp"

#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <optional>
#include <string_view>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>
#include <vector>

#include "bench_daemon.hpp"
#include "e2e_support.hpp"
#include "engine/fs/sha256.hpp"

namespace handoff::bench {
namespace {

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path) {
  throw std::system_error(errno, std::generic_category(), what + " " + path.string());
}

// A file descriptor closed on scope exit.
struct fd_guard {
  int fd;
  ~fd_guard() {
    if (fd >= 0) ::close(fd);
  }
};

void fsync_or_fail(int fd, const std::filesystem::path& path) {
  if (::fsync(fd) != 0) fail("fsync", path);
}

}  // namespace

double write_floor(const std::filesystem::path& base, std::size_t count,
                   const std::function<const std::string&(std::size_t)>& text_of, bool fsync_dir) {
  scratch_dir dir(base, "write-floor");
  const fd_guard dir_fd{::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dir_fd.fd < 0) fail("open", dir.path());
  const auto began = bench_clock::now();
  for (std::size_t i = 0; i < count; ++i) {
    const auto path = dir.path() / ("result-" + std::to_string(i) + ".txt");
    const fd_guard file{::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)};
    if (file.fd < 0) fail("create", path);
    write_all(file.fd, text_of(i));
    fsync_or_fail(file.fd, path);
    if (fsync_dir) fsync_or_fail(dir_fd.fd, dir.path());
  }
  return std::chrono::duration<double>(bench_clock::now() - began).count();
}

tree_size measure_tree(const std::filesystem::path& root) {
  tree_size size;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    const auto& path = entry.path();
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) fail("lstat", path);
    if (S_ISDIR(st.st_mode)) {
      ++size.directories;
    } else if (S_ISREG(st.st_mode)) {
      ++size.files;
      size.bytes += static_cast<std::size_t>(st.st_size);
      size.allocated_bytes += static_cast<std::size_t>(st.st_blocks) * 512;
    }
  }
  return size;
}

read_pass read_floor(const std::filesystem::path& root, bool hash) {
  std::vector<char> buffer(1 << 20);
  read_pass pass;
  const auto began = bench_clock::now();
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    // Symlinks are not followed (the queue opens its files with O_NOFOLLOW).
    if (entry.symlink_status().type() != std::filesystem::file_type::regular) continue;
    const auto& path = entry.path();
    const fd_guard file{::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)};
    if (file.fd < 0) fail("open", path);
    std::optional<sha256> digest;
    if (hash) digest.emplace();
    for (;;) {
      const ssize_t got = ::read(file.fd, buffer.data(), buffer.size());
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) fail("read", path);
      if (got == 0) break;
      pass.bytes += static_cast<std::size_t>(got);
      if (digest) digest->update(std::string_view(buffer.data(), static_cast<std::size_t>(got)));
    }
    if (digest) digest->final_hex();
    ++pass.files;
  }
  pass.seconds = std::chrono::duration<double>(bench_clock::now() - began).count();
  return pass;
}

}  // namespace handoff::bench
