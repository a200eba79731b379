#include "engine/fs/private_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace handoff {

namespace {

[[noreturn]] void refuse(std::string message) { throw std::runtime_error(std::move(message)); }

std::string errno_text(int code) { return std::strerror(code); }

// Opens `name` in `parent`, creating it (0700) first when it is missing and `create`; without
// `create` a missing one gives an empty fd. Intermediate
// components are opened O_PATH: we only walk through them, and O_PATH needs no read permission
// on them (a 0711 home directory is fine). The final one is opened O_RDONLY so it can be
// fsynced and listed.
unique_fd open_component(int parent, const std::string& name, bool final,
                         const std::filesystem::path& shown, std::string_view what, bool create = true) {
  bool created = false;
  if (!create) {
    // Looked at first, so that a missing name is told apart from one we may not open.
    struct stat st {};
    if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT) return {};
  } else if (::mkdirat(parent, name.c_str(), 0700) == 0) {
    created = true;
  } else if (errno != EEXIST) {
    refuse("cannot create " + std::string(what) + " " + shown.string() + ": " +
           errno_text(errno));
  }
  int flags = O_DIRECTORY | O_CLOEXEC | (final ? O_RDONLY : O_PATH);
  if (final || created) flags |= O_NOFOLLOW;
  unique_fd fd(::openat(parent, name.c_str(), flags));
  if (fd) {
    if (final && created && ::fchmod(fd.get(), 0700) != 0) {
      refuse("cannot set mode 0700 on " + std::string(what) + " " + shown.string() + ": " +
             errno_text(errno));
    }
    return fd;
  }
  const int err = errno;
  struct stat st {};
  const bool known = ::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  if (known && S_ISLNK(st.st_mode) && (flags & O_NOFOLLOW) != 0) {
    refuse(std::string(what) + " " + shown.string() +
           " is a symlink; it must be a real directory (remove the symlink or choose another " +
           std::string(what) + ")");
  }
  if (known && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)) {
    refuse(std::string(what) + " " + shown.string() +
           " exists and is not a directory (move it away or choose another " +
           std::string(what) + ")");
  }
  refuse("cannot open " + std::string(what) + " " + shown.string() + ": " + errno_text(err));
}

// The final directory must be ours and closed to everybody else.
void check_private(int fd, const std::filesystem::path& shown, std::string_view what) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    refuse("cannot check " + std::string(what) + " " + shown.string() + ": " + errno_text(errno));
  }
  const uid_t me = ::geteuid();
  if (st.st_uid != me) {
    refuse(std::string(what) + " " + shown.string() + " is owned by uid " +
           std::to_string(st.st_uid) + ", not by uid " + std::to_string(me) +
           " that handoff runs as; it must be ours (chown " + std::to_string(me) + " " +
           shown.string() + ", or choose another " + std::string(what) + ")");
  }
  if ((st.st_mode & 077) != 0) {
    refuse(std::string(what) + " " + shown.string() + " is mode " + octal_mode(st.st_mode) +
           "; it must be 0700 (chmod 700 " + shown.string() + ")");
  }
}

}  // namespace

std::filesystem::path normalize_dir(const std::filesystem::path& dir) {
  std::filesystem::path p = dir.lexically_normal();
  if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return p;
}

namespace {

unique_fd open_private_path(const std::filesystem::path& dir, std::string_view what, bool create) {
  if (!dir.is_absolute()) {
    refuse(std::string(what) + " must be an absolute path, not \"" + dir.string() + "\"");
  }
  const std::filesystem::path normal = dir.lexically_normal();
  std::vector<std::string> parts;
  for (const auto& part : normal.relative_path()) {
    if (!part.empty() && part != ".") parts.push_back(part.string());
  }
  if (parts.empty()) refuse(std::string(what) + " cannot be the root directory");

  unique_fd current(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!current) refuse("cannot open /: " + errno_text(errno));
  std::filesystem::path shown = "/";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    shown /= parts[i];
    const bool final = i + 1 == parts.size();
    current = open_component(current.get(), parts[i], final, shown, what, create);
    if (!current) return current;
  }
  check_private(current.get(), shown, what);
  return current;
}

}  // namespace

unique_fd open_private_dir(const std::filesystem::path& dir, std::string_view what) {
  return open_private_path(dir, what, true);
}

unique_fd open_existing_private_dir(const std::filesystem::path& dir, std::string_view what) {
  return open_private_path(dir, what, false);
}

unique_fd open_private_subdir(int parent_fd, const std::string& name,
                              const std::filesystem::path& shown, std::string_view what) {
  unique_fd fd = open_component(parent_fd, name, true, shown, what);
  check_private(fd.get(), shown, what);
  return fd;
}

}  // namespace handoff
