// Opening a directory that must be private to the daemon's user: the artifact store, the queue
// and the queue's subdirectories.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "engine/fs/posix_io.hpp"

namespace handoff {

// Opens the directory at absolute `dir`, creating what is missing with mode 0700, and returns
// an O_RDONLY|O_DIRECTORY fd every later operation is made relative to.
//
// Components that already exist are traversed as they are (an ancestor may be a symlink the
// user set up on purpose, e.g. ~/.pi -> /data/pi). A component we create is opened with
// O_NOFOLLOW right after mkdirat, and the final directory is always opened with O_NOFOLLOW, so
// a symlink planted at a name we create, or at the directory itself, is never followed.
// The final directory must be owned by the effective uid and have no group/other permission
// bits; one we create is chmod'ed to exactly 0700 whatever the umask.
// Throws std::runtime_error saying what is wrong and how to fix it; `what` names the directory
// in that message ("artifact dir", "queue dir").
unique_fd open_private_dir(const std::filesystem::path& dir, std::string_view what);

// The same, creating nothing: an empty fd when `dir` or one of its ancestors does not exist.
// What exists is held to the same rules (a symlink at `dir`, a directory not ours or open to
// others is refused with std::runtime_error).
unique_fd open_existing_private_dir(const std::filesystem::path& dir, std::string_view what);

// `dir` spelled one way: "/a/./b/" -> "/a/b" (lexically; symlinks are not resolved).
std::filesystem::path normalize_dir(const std::filesystem::path& dir);

// The same as open_private_dir for `name`, a single component directly inside the open directory `parent_fd`.
// `shown` is its full path, for messages.
unique_fd open_private_subdir(int parent_fd, const std::string& name,
                              const std::filesystem::path& shown, std::string_view what);

}  // namespace handoff
