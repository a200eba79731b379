// Umasks, mounts and file peeking for the store and queue tests (temp dirs: temp_dir.hpp), and
// how a case that cannot make its fault here says so (cannot_inject).
// Everything is undone at scope exit, so a failing check leaves no mount behind.
#pragma once

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "support/temp_dir.hpp"

namespace handoff::test {

// A case that cannot make its fault here (no root for tmpfs, no usable strace) says why and
// passes, unless HANDOFF_REQUIRE_FAULT_INJECTION is set (.ci/run sets it): then it fails, so CI
// never reports green for a fault it did not inject.
inline void cannot_inject(const std::string& why) {
  if (const char* required = std::getenv("HANDOFF_REQUIRE_FAULT_INJECTION"); required && *required)
    FAIL("HANDOFF_REQUIRE_FAULT_INJECTION is set, but " << why);
  MESSAGE("skipped: " << why);
}

// Sets the process umask for the scope.
class umask_guard {
 public:
  explicit umask_guard(mode_t mask) : old_(::umask(mask)) {}
  ~umask_guard() { ::umask(old_); }
  umask_guard(const umask_guard&) = delete;
  umask_guard& operator=(const umask_guard&) = delete;

 private:
  mode_t old_;
};

// A small tmpfs mounted on `at` (which must exist), unmounted at scope exit. `options` are
// tmpfs's, e.g. "size=64k" or "size=64k,nr_inodes=32". Mounting needs CAP_SYS_ADMIN; when it
// is refused, mounted() is false and the caller skips with a MESSAGE.
class tmpfs_mount {
 public:
  tmpfs_mount(const std::filesystem::path& at, const std::string& tmpfs_options) : at_(at) {
    const std::string options = tmpfs_options + ",mode=0700";
    if (::mount("tmpfs", at_.c_str(), "tmpfs", 0, options.c_str()) == 0) {
      mounted_ = true;
    } else {
      why_ = std::strerror(errno);
    }
  }
  ~tmpfs_mount() {
    if (mounted_) ::umount2(at_.c_str(), MNT_DETACH);
  }
  tmpfs_mount(const tmpfs_mount&) = delete;
  tmpfs_mount& operator=(const tmpfs_mount&) = delete;

  bool mounted() const noexcept { return mounted_; }
  const std::string& why_not() const noexcept { return why_; }
  // Makes the filesystem read-only (open fds stay valid; writes then fail with EROFS).
  bool remount_read_only() {
    return ::mount(nullptr, at_.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr) == 0;
  }

 private:
  std::filesystem::path at_;
  bool mounted_ = false;
  std::string why_;
};

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Where a journal segment's entries end: its size less the zeros the writer keeps ahead of them
// (journal::zero_ahead). Every entry ends in its JSON record's '}' or in its text, and no test
// text ends in a zero byte.
inline std::size_t journal_end(const std::filesystem::path& segment) {
  const std::string bytes = read_file(segment);
  const std::size_t last = bytes.find_last_not_of('\0');
  return last == std::string::npos ? 0 : last + 1;
}

// For a file another thread may remove at any moment: nullopt when it is gone.
inline std::optional<std::string> read_file_if_there(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::filesystem::path& p, const std::string& bytes, mode_t mode) {
  {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << bytes;
    if (!out) throw std::runtime_error("cannot write " + p.string());
  }
  if (::chmod(p.c_str(), mode) != 0) throw std::runtime_error("cannot chmod " + p.string());
}

// Names in a directory (not recursive), sorted.
inline std::vector<std::string> names_in(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// lstat's permission bits and type (a symlink is reported as a symlink).
inline struct stat lstat_of(const std::filesystem::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) throw std::runtime_error("cannot lstat " + p.string());
  return st;
}

inline mode_t mode_of(const std::filesystem::path& p) { return lstat_of(p).st_mode & 07777; }

// Inodes of the files with no name in `dir` that this process (or process `pid`) holds open
// (O_TMPFILE: the fd's link reads "<dir>/#<inode> (deleted)").
inline std::vector<ino_t> unnamed_files_in(const std::filesystem::path& dir, pid_t pid = 0) {
  const std::string prefix = (std::filesystem::canonical(dir) / "#").string();
  const std::string fds = pid == 0 ? "/proc/self/fd" : "/proc/" + std::to_string(pid) + "/fd";
  std::vector<ino_t> out;
  for (const auto& e : std::filesystem::directory_iterator(fds)) {
    std::error_code ec;
    const std::filesystem::path target = std::filesystem::read_symlink(e.path(), ec);
    if (ec || target.string().rfind(prefix, 0) != 0) continue;
    struct stat st {};
    if (::stat(e.path().c_str(), &st) == 0) out.push_back(st.st_ino);
  }
  return out;
}

// unnamed_files_in(dir, pid) once it holds a file and is not `before` (a spare is made after
// an answer, and may not be yet), or as it is after 2 s.
inline std::vector<ino_t> unnamed_files_after(const std::filesystem::path& dir, const std::vector<ino_t>& before,
                                              pid_t pid = 0) {
  std::vector<ino_t> now = unnamed_files_in(dir, pid);
  for (int i = 0; i < 1000 && (now.empty() || now == before); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    now = unnamed_files_in(dir, pid);
  }
  return now;
}

// Remounts the tmpfs at `at` with new options ("size=4m", "ro", "rw"); true on success.
inline bool remount_tmpfs(const std::filesystem::path& at, const std::string& options,
                          bool read_only = false) {
  unsigned long flags = MS_REMOUNT;
  if (read_only) flags |= MS_RDONLY;
  return ::mount(nullptr, at.c_str(), nullptr, flags, options.c_str()) == 0;
}

}  // namespace handoff::test
