#include "protocol/socket_location.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace handoff::rpc {
namespace {

namespace fs = std::filesystem;

// The variable when it is set to an absolute path; empty otherwise (unset, empty or relative).
fs::path absolute_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || value[0] != '/') return {};
  return value;
}

[[noreturn]] void refuse(const fs::path& dir, const std::string& problem) {
  throw std::runtime_error("the socket directory " + dir.string() + " " + problem);
}

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// A descriptor closed on every way out.
struct fd_closer {
  int fd;
  ~fd_closer() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

socket_location daemon_socket_location() {
  if (const fs::path runtime = absolute_env("XDG_RUNTIME_DIR"); !runtime.empty())
    return {(runtime / "handoff" / "handoffd.sock").lexically_normal(), socket_source::runtime_dir};
  fs::path temporary = absolute_env("TMPDIR");
  if (temporary.empty()) temporary = "/tmp";
  const std::string own = "handoff-" + std::to_string(::geteuid());
  return {(temporary / own / "handoffd.sock").lexically_normal(), socket_source::private_fallback};
}

socket_location client_socket_location() {
  if (const char* named = std::getenv("HANDOFF_SOCKET"); named != nullptr && named[0] != '\0')
    return {fs::path(named), socket_source::handoff_socket};
  return daemon_socket_location();
}

std::string_view client_reason(socket_source source) {
  switch (source) {
    case socket_source::handoff_socket:
      return "HANDOFF_SOCKET is set";
    case socket_source::runtime_dir:
      return "HANDOFF_SOCKET is not set: the user's runtime directory, XDG_RUNTIME_DIR";
    case socket_source::private_fallback:
      return "neither HANDOFF_SOCKET nor XDG_RUNTIME_DIR is set: the private fallback";
  }
  return "";
}

void prepare_socket_dir(const fs::path& dir) {
  // mkdir does not follow a symlink at `dir` (EEXIST), and makes nothing but the last name.
  if (::mkdir(dir.c_str(), 0700) == 0) {
    // 0700 whatever the umask, so that its owner can use it; a name swapped in meanwhile is
    // not followed, and is refused below.
    if (::fchmodat(AT_FDCWD, dir.c_str(), 0700, AT_SYMLINK_NOFOLLOW) != 0 && errno != ENOENT &&
        errno != EOPNOTSUPP)
      refuse(dir, "was made, but its mode cannot be set to 0700: " + std::string(std::strerror(errno)));
  } else if (errno != EEXIST) {
    refuse(dir, "cannot be made: " + std::string(std::strerror(errno)));
  }
  // Looked at through a descriptor of the name itself (O_PATH | O_NOFOLLOW opens a symlink, not
  // what it points to), so that every check below is of one and the same thing.
  const fd_closer opened{::open(dir.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC)};
  struct stat st {};
  if (opened.fd < 0 || ::fstat(opened.fd, &st) != 0)
    refuse(dir, "cannot be opened: " + std::string(std::strerror(errno)));
  if (S_ISLNK(st.st_mode))
    refuse(dir, "is a symlink; handoff does not follow one there (remove it: handoff makes the directory itself)");
  if (!S_ISDIR(st.st_mode)) refuse(dir, "exists and is not a directory (move it away)");
  if (const uid_t me = ::geteuid(); st.st_uid != me)
    refuse(dir, "belongs to uid " + std::to_string(st.st_uid) + ", not to uid " + std::to_string(me) +
                    " that handoff runs as: another user's socket could stand there (remove the directory, or "
                    "choose another socket)");
  if ((st.st_mode & 077) != 0)
    refuse(dir, "is mode " + mode_text(st.st_mode) + ", open to other users; it must be 0700 (chmod 700 " +
                    dir.string() + ")");
}

}  // namespace handoff::rpc
