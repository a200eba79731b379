// The checks behind `handoff doctor`, each on the real filesystem, each giving its verdict in
// plain words and, when something is wrong, the command that fixes it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli/harness/harness.hpp"

namespace handoff::cli {

struct finding {
  enum class level { ok, warn, fail };
  level severity = level::ok;
  std::string text;  // "artifact dir /x is mode 0777: run chmod 700 /x"
};

// The socket's directory and the store and queue directories: they must be real directories
// (not symlinks), owned by us, mode 0700, as handoffd requires (it refuses to start otherwise).
// `what` names it in the text ("artifact dir"). A directory that does not exist yet is a
// warning when `may_be_missing` (handoffd creates it at start), a failure otherwise.
finding check_private_dir(const std::filesystem::path& dir, const std::string& what, bool may_be_missing);

// Files directly in `dir` (and, `depth` levels down, in its subdirectories) must be ours and
// closed to others: files 0600, directories 0700. One finding sums up what was found, naming
// the first offender and the fix; ok when all are private or `dir` does not exist.
finding check_private_contents(const std::filesystem::path& dir, const std::string& what, int depth);

// The socket file: present, a socket, ours, mode 0600.
finding check_socket_file(const std::filesystem::path& socket);

// Free space on the filesystem holding `path` (or its nearest existing ancestor): a warning
// under 1 GiB or under 5% of the filesystem.
finding check_free_space(const std::filesystem::path& path, const std::string& what);

// A harness whose program (h.program) is on the PATH: whether handoff is set up for it, as
// `handoff setup NAME --check` says with its defaults (run here, its report kept, not printed):
// ok naming the files, else a warning with the command that sets it up, or why its settings
// cannot be checked. nullopt when the program is not on the PATH: a harness is optional.
std::optional<finding> check_harness_setup(const harness& h);

}  // namespace handoff::cli
