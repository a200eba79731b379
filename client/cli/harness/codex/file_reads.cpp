#include "cli/harness/codex/file_reads.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/fs/posix_io.hpp"

namespace handoff::cli::codex {

std::optional<std::string> read_whole(const std::filesystem::path& path, std::size_t max_bytes) {
  const unique_fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return std::nullopt;
  try {
    return read_all(fd.get(), max_bytes, path.string());
  } catch (const fs_error&) {
    return std::nullopt;
  }
}

std::string read_tail(const std::filesystem::path& path, std::size_t most) {
  const unique_fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return {};
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
  const auto size = static_cast<std::size_t>(st.st_size);
  const std::size_t from = size > most ? size - most : 0;
  std::string out(size - from, '\0');
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::pread(fd.get(), out.data() + got, out.size() - got, static_cast<off_t>(from + got));
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return out;
}

}  // namespace handoff::cli::codex
