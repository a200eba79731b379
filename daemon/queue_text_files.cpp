#include "queue_text_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace handoff::daemon {

std::optional<text_file> queue_text_files::find(std::string_view sha256) {
  const std::filesystem::path path = queue_.text_path(sha256);
  if (!tried_) {
    tried_ = true;
    // The queue's directory is ours and closed to others (it was opened so at start); one that
    // is now a symlink or anything else is not offered.
    unique_fd dir(::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (dir && ::fstat(dir.get(), &st) == 0 && st.st_uid == ::geteuid() && (st.st_mode & 077) == 0)
      dir_ = std::move(dir);
  }
  if (!dir_) return std::nullopt;
  std::string name = path.filename().string();
  struct stat st {};
  if (::fstatat(dir_.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return text_file{dir_.get(), std::move(name)};
}

}  // namespace handoff::daemon
