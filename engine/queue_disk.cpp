#include "engine/queue_disk.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "engine/posix_io.hpp"
#include "engine/queue_files.hpp"
#include "engine/sha256.hpp"

namespace handoff {

std::int64_t unix_ms_now() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string remove_name(int dir_fd, const std::string& name, std::string_view shown) {
  if (::unlinkat(dir_fd, name.c_str(), 0) == 0 || errno == ENOENT) return {};
  return fs_error(errno, "removing " + std::string(shown)).what();
}

std::optional<std::string> read_queue_file(int dir_fd, const std::string& name,
                                           std::string_view shown, std::string& why) {
  private_file f = open_private_file(dir_fd, name, shown);
  if (f.state != private_file::status::ok) {
    why = f.state == private_file::status::absent ? "it vanished" : f.reason;
    return std::nullopt;
  }
  try {
    return read_all(f.fd.get(), max_queue_file_bytes, "reading " + std::string(shown));
  } catch (const fs_error& e) {
    why = e.what();
    return std::nullopt;
  }
}

void sync_quietly(int dir_fd) noexcept {
  while (::fsync(dir_fd) != 0 && errno == EINTR) {
  }
}

std::optional<std::string> hash_stem(std::string_view name, std::string_view suffix) {
  if (name.size() != 64 + suffix.size() || !name.ends_with(suffix)) return std::nullopt;
  const std::string_view stem = name.substr(0, 64);
  if (!is_sha256_hex(stem)) return std::nullopt;
  return std::string(stem);
}

}  // namespace handoff
