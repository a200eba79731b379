#include "cli/harness/settings_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

#include "engine/fs/atomic_file.hpp"
#include "engine/fs/posix_io.hpp"

namespace handoff::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

constexpr std::size_t max_settings_bytes = 16 << 20;  // a settings file larger than this is refused

// The file's text, or nullopt when it does not exist. Throws (fs_error, std::runtime_error) on
// anything else: a symlink, not a regular file, over 16 MiB, unreadable.
std::optional<std::string> read_settings(const fs::path& path) {
  const unique_fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd) {
    if (errno == ENOENT) return std::nullopt;
    if (errno == ELOOP) throw std::runtime_error(path.string() + " is a symlink; handoff edits only a regular file");
    throw fs_error(errno, "opening " + path.string());
  }
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) throw std::runtime_error(path.string() + " is not a regular file");
  try {
    return read_all(fd.get(), max_settings_bytes, "reading " + path.string());
  } catch (const fs_error& e) {
    if (e.code() != EFBIG) throw;
    throw std::runtime_error(path.string() + " is larger than 16 MiB; handoff does not edit it");
  }
}

// Replaces `path` with `text` atomically (write_file_atomically: a temp file beside it, synced,
// renamed over it, the directory synced), then gives it back the old file's mode (else 0600).
void write_settings(const fs::path& path, const std::string& text) {
  const fs::path dir = path.parent_path();
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec) throw std::runtime_error("cannot create " + dir.string() + ": " + ec.message());
    ::chmod(dir.c_str(), 0700);
  }
  mode_t mode = 0600;
  struct stat st{};
  if (::lstat(path.c_str(), &st) == 0) mode = st.st_mode & 0777;
  const unique_fd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd) throw fs_error(errno, "opening " + dir.string());
  const std::string name = path.filename().string();
  write_file_atomically(dir_fd.get(), name, text, publish_mode::replace, path.string());
  if (mode != 0600 && ::fchmodat(dir_fd.get(), name.c_str(), mode, 0) != 0) throw fs_error(errno, "restoring the mode of " + path.string());
}

}  // namespace

void edit_settings_text(const settings_edit& edit,
                        const std::function<std::optional<std::string>(const std::optional<std::string>&)>& change) {
  const std::string target(edit.target);
  const char* path = edit.path.c_str();
  const std::optional<std::string> before = read_settings(edit.path);
  const std::optional<std::string> after = change(before);
  if (edit.mode == setup_mode::check) {
    if (edit.report == nullptr) throw std::logic_error("setup " + target + ": a check without a report");
    edit.report->found(edit.target, {edit.path, edit.remove, after.has_value()});
    return;
  }
  if (!after) {
    std::printf("setup %s: %s %s; nothing to change\n", target.c_str(), path,
                !before ? "does not exist" : edit.remove ? "has no entry of handoff's" : "already has handoff's entries");
    return;
  }
  if (edit.mode == setup_mode::print) {
    std::printf("setup %s: would write %s:\n%s", target.c_str(), path, after->c_str());
    return;
  }
  write_settings(edit.path, *after);
  std::printf("setup %s: %s %s\n", target.c_str(), edit.remove ? "removed handoff's entries from" : "wrote handoff's entries to",
              path);
}

void edit_settings(const settings_edit& edit, const std::function<void(const ordered_json&)>& check,
                   const std::function<ordered_json(ordered_json)>& change) {
  edit_settings_text(edit, [&](const std::optional<std::string>& before) -> std::optional<std::string> {
    ordered_json settings = ordered_json::object();
    if (before && before->find_first_not_of(" \t\r\n") != std::string::npos) {
      settings = ordered_json::parse(*before, nullptr, false);
      if (settings.is_discarded())
        throw std::runtime_error(edit.path.string() + " is not valid JSON; fix it first (nothing was changed)");
    }
    if (!settings.is_object()) throw std::runtime_error(edit.path.string() + ": expected a JSON object");
    check(settings);
    const ordered_json after = change(settings);
    if (after == settings && (before || edit.remove)) return std::nullopt;
    return after.dump(2) + "\n";
  });
}

}  // namespace handoff::cli
