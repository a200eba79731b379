#include "engine/queue/queue_disk.hpp"

#include <chrono>

#include "engine/fs/atomic_file.hpp"
#include "engine/queue/queue_files.hpp"

namespace handoff {

std::int64_t unix_ms_now() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
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

std::vector<std::string> names_after_temps(int dir_fd, const std::string& area, std::vector<std::string>& notes) {
  std::vector<std::string> out;
  for (std::string& name : list_names(dir_fd)) {
    if (!name.starts_with(temp_prefix)) {
      out.push_back(std::move(name));
      continue;
    }
    std::string err = remove_name(dir_fd, name, area + "/" + name);
    notes.push_back(err.empty() ? "removed " + area + "/" + name + ", a temp file left by a crash" : std::move(err));
  }
  return out;
}

}  // namespace handoff
