#include "upkeep/legacy_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "engine/fs/posix_io.hpp"
#include "engine/fs/private_dir.hpp"
#include "engine/fs/sha256.hpp"

namespace handoff::daemon {
namespace {

constexpr std::string_view legacy_dir_name = "former artifact dir";

// Removes the directory `name` in `parent` when it is empty and is still the very directory
// `expected` (fstat'ed); an `expected` of nullptr takes any directory there. Returns 0 or the errno
// (ENOTEMPTY: something is left in it; ESTALE: another directory is at the name now).
int remove_empty_dir(const std::filesystem::path& parent, const std::string& name, const struct stat* expected) {
  const unique_fd parent_fd(::open(parent.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!parent_fd) return errno;
  struct stat st {};
  if (::fstatat(parent_fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return errno;
  if (!S_ISDIR(st.st_mode)) return ENOTDIR;
  if (expected != nullptr && (st.st_dev != expected->st_dev || st.st_ino != expected->st_ino)) return ESTALE;
  return ::unlinkat(parent_fd.get(), name.c_str(), AT_REMOVEDIR) == 0 ? 0 : errno;
}

}  // namespace

std::optional<mapped_file> open_legacy_artifact(const std::filesystem::path& dir, std::string_view sha256_hex) {
  if (dir.empty() || !is_sha256_hex(sha256_hex)) return std::nullopt;
  const unique_fd fd = open_existing_private_dir(dir, legacy_dir_name);
  if (!fd) return std::nullopt;
  const std::string name = std::string(sha256_hex) + ".txt";
  const private_file f = open_private_file(fd.get(), name, name);
  if (f.state != private_file::status::ok) return std::nullopt;
  return mapped_file(f.fd.get());
}

legacy_drain drain_legacy_store(const std::filesystem::path& dir, pending_queue& queue,
                                const hygiene_settings& settings, bool dry_run) {
  legacy_drain out;
  if (dir.empty()) return out;
  const unique_fd fd = open_existing_private_dir(dir, legacy_dir_name);
  if (!fd) return out;
  hygiene_settings legacy = settings;
  legacy.expire_tombstones = false;
  out.report = collect_garbage(fd.get(), queue, legacy, dry_run);
  if (dry_run || out.report->plan.kept_files != 0) return out;

  struct stat held {};
  if (::fstat(fd.get(), &held) != 0) return out;
  const std::filesystem::path normal = normalize_dir(dir);
  const int err = remove_empty_dir(normal.parent_path(), normal.filename().string(), &held);
  if (err == ENOTEMPTY || err == EEXIST) return out;  // a young temp, a name not ours: kept with it
  if (err != 0) {
    out.problem = "cannot remove the empty " + std::string(legacy_dir_name) + " " + normal.string() + ": " +
                  std::strerror(err);
    return out;
  }
  out.removed = true;
  // Its parent was made for it (…/cache/openpi); anything else in it keeps it.
  const std::filesystem::path parent = normal.parent_path();
  if (parent.filename() == "openpi") remove_empty_dir(parent.parent_path(), "openpi", nullptr);
  return out;
}

void log_legacy_drain(const std::filesystem::path& dir, const legacy_drain& drain) {
  if (!drain.report) return;
  const hygiene_report& r = *drain.report;
  const bool changed = !r.outcome.removed.empty() || drain.removed;
  spdlog::log(changed ? spdlog::level::info : spdlog::level::debug,
              "store gc: former artifact dir {}: removed {} files, {} artifacts ({} bytes) kept{}", dir.string(),
              r.outcome.removed.size(), r.plan.kept_files, r.plan.kept_bytes,
              drain.removed ? "; it was empty and is removed" : "");
  for (const std::string& problem : r.problems) spdlog::warn("store gc: {}", problem);
  if (!drain.problem.empty()) spdlog::warn("store gc: {}", drain.problem);
}

}  // namespace handoff::daemon
