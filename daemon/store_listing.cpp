#include "store_listing.hpp"

#include <fcntl.h>
#include <sys/stat.h>

namespace handoff::daemon {
namespace {

// The directory's mtime (not following a symlink), or nullopt when it cannot be read.
std::optional<store_listing::clock::time_point> mtime_of(const std::filesystem::path& dir) {
  struct stat st {};
  if (::fstatat(AT_FDCWD, dir.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
    return std::nullopt;
  const auto since_epoch = std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec);
  return store_listing::clock::time_point(std::chrono::duration_cast<store_listing::clock::duration>(since_epoch));
}

}  // namespace

std::optional<rpc::store_status> store_listing::reuse(const std::filesystem::path& dir) const {
  if (!mtime_) return std::nullopt;
  const auto mtime = mtime_of(dir);
  if (!mtime || *mtime != *mtime_) return std::nullopt;
  return listing_;
}

void store_listing::keep(const std::filesystem::path& dir, const rpc::store_status& listing,
                         clock::time_point listed_at) {
  mtime_.reset();
  if (listing.error) return;  // ask the disk again next time
  const auto mtime = mtime_of(dir);
  // A change after the listing started would have a later mtime than listed_at - settle.
  if (!mtime || listed_at < *mtime + settle) return;
  mtime_ = mtime;
  listing_ = listing;
}

}  // namespace handoff::daemon
