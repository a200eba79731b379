#include "cli/harness/core/local_bound.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "cli/harness/core/daemon_link.hpp"
#include "engine/fs/atomic_file.hpp"
#include "engine/fs/posix_io.hpp"
#include "engine/fs/private_dir.hpp"
#include "engine/fs/sha256.hpp"
#include "engine/text/batch.hpp"
#include "engine/text/projection.hpp"
#include "protocol/default_paths.hpp"

namespace handoff::cli::hook_core {

namespace fs = std::filesystem;

namespace {
// Most bytes of the reason the one line prints: its parts are each cut shorter (why_not_bounded).
constexpr std::size_t max_line_reason_bytes = 512;
}  // namespace

fs::path unbounded_dir() {
  const fs::path store = rpc::default_artifact_dir();
  return store.empty() ? store : store.parent_path() / "unbounded";
}

fs::path write_private_copy(const fs::path& dir, std::string_view text) {
  if (!dir.is_absolute()) throw std::runtime_error("no directory for a private copy (HOME is not set)");
  const unique_fd at = open_private_dir(dir, "private copy dir");
  const std::string name = sha256_hex(text) + ".txt";
  // Replace: a rename over the name never follows what is there; the content is the text's.
  write_file_atomically(at.get(), name, text, publish_mode::replace, "the private copy");
  return dir / name;
}

namespace {

bool copy_name(std::string_view name) {
  return name.size() == sha256_hex_chars + 4 && name.substr(sha256_hex_chars) == ".txt" &&
         is_sha256_hex(name.substr(0, sha256_hex_chars));
}

}  // namespace

fs::path keep_unbounded_copy(std::string_view text) {
  const fs::path dir = unbounded_dir();
  const fs::path path = write_private_copy(dir, text);
  try {
    const unique_fd at = open_private_dir(dir, "private copy dir");
    const auto oldest = std::chrono::system_clock::now() - unbounded_keep;
    for (const std::string& name : list_names(at.get())) {
      struct stat st {};
      if (!copy_name(name) || ::fstatat(at.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
        continue;
      if (std::chrono::system_clock::from_time_t(st.st_mtim.tv_sec) < oldest) ::unlinkat(at.get(), name.c_str(), 0);
    }
  } catch (const std::exception&) {
    // The copy is written; one left behind is the user's cache to clear.
  }
  return path;
}

std::string one_line(std::string_view why, std::size_t most) {
  std::string out;
  for (const char ch : why) out.push_back(static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f ? ' ' : ch);
  if (out.size() <= most) return out;
  std::size_t cut = most > 3 ? most - 3 : 0;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  out.resize(cut);
  return out + "...";
}

std::string passes_whole_line(std::string_view why) {
  return "[handoff: " + one_line(why, max_line_reason_bytes) + "; the result passes whole]";
}

std::string local_head_tail(std::string_view full, const reader_profile& reader, const fs::path& full_path,
                            std::string_view why, std::size_t most_bytes) {
  const std::string line = "[handoff: " + one_line(why, max_line_reason_bytes) + "; the head and tail above were cut by the hook itself, the full text (" +
                           grouped(full.size()) + " bytes) is in " + full_path.string() + "]";
  surface_caps caps = framed_caps(surface_caps::wait(), reader);
  caps.per_result_bytes = std::min(caps.per_result_bytes, most_bytes);
  const std::size_t line_room = line.size() + 2;  // "\n\n" + the line
  if (caps.per_result_bytes <= line_room || caps.max_lines <= 2)
    throw std::invalid_argument("no room for the head and tail beside the note");
  artifact_ref artifact;
  artifact.saved = true;
  artifact.path = full_path.string();
  artifact.sha256 = sha256_hex(full);
  if (const fs::path self = rpc::own_executable(); !self.empty()) artifact.reader = self.string();
  artifact.profile = &reader;
  const projection cut =
      project(full, projection_limits{caps.per_result_bytes - line_room, caps.max_lines - 2}, artifact);
  return cut.text + "\n\n" + line;
}

}  // namespace handoff::cli::hook_core
