#include "engine/store/artifact_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "engine/fs/atomic_file.hpp"
#include "engine/fs/posix_io.hpp"
#include "engine/fs/private_dir.hpp"
#include "engine/fs/sha256.hpp"

namespace handoff {

namespace {

// What stands at an artifact's name.
struct existing {
  enum class verdict { absent, same, refused };
  verdict state = verdict::absent;
  std::string reason;  // when refused
};

// A file at the name is trusted only when it is a regular file of ours, closed to others, and
// holds exactly `text`. Its bytes are compared, not re-hashed: the comparison is cheaper and
// proves more. Anything else is reported and left exactly as it is.
// With when_synced::before_return a file found the same is synced (file and directory): it may
// be one a by_caller save left, and the caller is about to name it.
existing check_existing(int dir_fd, const std::string& name, const std::string& shown,
                        std::string_view text, when_synced sync = when_synced::by_caller) {
  private_file f = open_private_file(dir_fd, name, shown);
  if (f.state == private_file::status::absent) return {};
  if (f.state == private_file::status::refused) {
    return {existing::verdict::refused, std::move(f.reason)};
  }
  const auto size = static_cast<std::size_t>(f.st.st_size);
  if (size != text.size()) {
    return {existing::verdict::refused, "a different file is at " + shown + " (" +
                                            std::to_string(size) + " bytes, expected " +
                                            std::to_string(text.size()) +
                                            "); leaving it untouched"};
  }
  if (!content_equals(f.fd.get(), text)) {
    return {existing::verdict::refused,
            "a different file of the same size is at " + shown + "; leaving it untouched"};
  }
  if (sync == when_synced::before_return && (::fsync(f.fd.get()) != 0 || ::fsync(dir_fd) != 0)) {
    return {existing::verdict::refused, fs_error(errno, "syncing " + shown).what()};
  }
  return {existing::verdict::same, {}};
}

bool same_inode(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// Whether the path a footer will show reaches the file at `name` in `dir_fd`: false when the
// directory was moved or swapped for a symlink after the file was written.
bool shown_path_holds(int dir_fd, const std::string& name, const std::string& shown) {
  struct stat written {};
  struct stat reached {};
  return ::fstatat(dir_fd, name.c_str(), &written, AT_SYMLINK_NOFOLLOW) == 0 &&
         ::fstatat(AT_FDCWD, shown.c_str(), &reached, AT_SYMLINK_NOFOLLOW) == 0 &&
         same_inode(written, reached);
}

// What linking an offered source file at an artifact's name did.
enum class link_outcome {
  linked,  // the name now holds the source's inode (not yet fsynced in the directory)
  taken,   // something is at the name already: the caller verifies it
  failed,  // nothing was linked; `why` says why (the caller writes a copy)
};

// Links `source` at `name` in `dir_fd` when it is a regular 0600 file of ours of `size` bytes.
// The very inode checked is linked (through its open fd, not its name again), so a swap of the
// source's name in between cannot slip in another file; a symlink is never followed.
link_outcome link_source(const text_file& source, std::size_t size, int dir_fd, const std::string& name,
                         std::string& why) {
  const std::string shown = source.fd >= 0 ? std::string("the unnamed text file") : source.name;
  private_file f;
  if (source.fd >= 0) {  // ours, written a moment ago: what it holds is all there is to check
    f.state = ::fstat(source.fd, &f.st) == 0 && S_ISREG(f.st.st_mode) ? private_file::status::ok
                                                                       : private_file::status::refused;
    f.reason = shown + " cannot be checked";
  } else {
    f = open_private_file(source.dir_fd, source.name, source.name);
  }
  const int fd = source.fd >= 0 ? source.fd : f.fd.get();
  if (f.state != private_file::status::ok) {
    why = f.state == private_file::status::absent ? shown + " is gone" : std::move(f.reason);
    return link_outcome::failed;
  }
  if ((f.st.st_mode & 07777) != 0600) {
    why = shown + " is mode " + octal_mode(f.st.st_mode) + ", not 0600";
    return link_outcome::failed;
  }
  if (static_cast<std::size_t>(f.st.st_size) != size) {
    why = shown + " has " + std::to_string(f.st.st_size) + " bytes, the text " + std::to_string(size);
    return link_outcome::failed;
  }
  if (const int err = link_open_file(fd, dir_fd, name); err != 0) {
    if (err == EEXIST) return link_outcome::taken;
    why = fs_error(err, "linking " + shown + " into the store").what();
    return link_outcome::failed;
  }
  // The store's age limit (store_gc: by mtime) counts from the save, as for a copy written now,
  // not from when the queue wrote the text. Failing that only makes the artifact look older.
  (void)::futimens(fd, nullptr);
  return link_outcome::linked;
}

}  // namespace

struct artifact_store::opened {
  unique_fd fd;
  struct stat st {};  // at open: identity, owner, mode

  opened(const std::filesystem::path& dir, std::string_view dir_name)
      : fd(open_private_dir(dir, dir_name)) {
    if (::fstat(fd.get(), &st) != 0) throw fs_error(errno, "checking " + dir.string());
  }
};

artifact_store::artifact_store(std::filesystem::path dir, when_moved moved, std::string kind)
    : dir_(normalize_dir(dir)),
      moved_(moved),
      kind_(std::move(kind)),
      dir_name_(kind_ + " dir"),
      current_(std::make_shared<const opened>(dir_, dir_name_)) {}

artifact_store::~artifact_store() = default;

std::shared_ptr<const artifact_store::opened> artifact_store::directory(std::string& why) const {
  std::shared_ptr<const opened> held;
  {
    std::lock_guard lock(mutex_);
    held = current_;
  }
  struct stat now {};
  const bool found = ::fstatat(AT_FDCWD, dir_.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0;
  if (found && S_ISDIR(now.st_mode) && same_inode(now, held->st)) {
    // Still ours and closed to others? A chmod or chown since the start counts as refusal.
    if (now.st_uid != ::geteuid() || (now.st_mode & 077) != 0) {
      why = dir_name_ + " " + dir_.string() + " is now mode " + octal_mode(now.st_mode) +
            " owned by uid " + std::to_string(now.st_uid) + "; it must be 0700 and ours (chmod 700 " +
            dir_.string() + ")";
      return nullptr;
    }
    return held;
  }
  const std::string what = !found                 ? "was removed"
                           : S_ISLNK(now.st_mode) ? "was replaced by a symlink"
                                                  : "was moved or replaced";
  if (moved_ == when_moved::refuse) {
    why = dir_name_ + " " + dir_.string() + " " + what + " while handoffd was running; not saving";
    return nullptr;
  }
  try {
    auto fresh = std::make_shared<const opened>(dir_, dir_name_);
    std::lock_guard lock(mutex_);
    current_ = fresh;
    return fresh;
  } catch (const std::exception& e) {
    why = "the " + dir_name_ + " " + what + " while handoffd was running: " + e.what();
    return nullptr;
  }
}

artifact_ref artifact_store::save(std::string_view text) { return save(text, sha256_hex(text)); }

artifact_ref artifact_store::save(std::string_view text, std::string_view sha256_hex,
                                  const std::optional<text_file>& source, when_synced sync) {
  artifact_ref ref;
  ref.sha256 = std::string(sha256_hex);
  // The name comes from the hash alone; a malformed hash is a caller bug, not a file name.
  if (!is_sha256_hex(sha256_hex)) {
    ref.error = "invalid SHA-256 \"" + ref.sha256 + "\" for an artifact name";
    return ref;
  }
  const std::string name = ref.sha256 + ".txt";
  const std::string shown = path_of(sha256_hex).string();
  const std::shared_ptr<const opened> dir = directory(ref.error);
  if (!dir) return ref;
  const int dir_fd = dir->fd.get();
  // Saved only when the path the footer shows reaches what we wrote or verified.
  const auto publish = [&] {
    if (shown_path_holds(dir_fd, name, shown)) {
      ref.saved = true;
      ref.path = shown;
    } else {
      ref.error = dir_name_ + " " + dir_.string() +
                  " was moved or replaced while saving; the text is not at " + shown;
    }
    return ref;
  };
  const auto settle = [&](existing found) {
    if (found.state == existing::verdict::same) return publish();
    ref.error = found.state == existing::verdict::refused
                    ? std::move(found.reason)
                    : "the " + kind_ + " disappeared right after it was written";
    return ref;
  };

  // Identical content was saved before: reuse it, once verified.
  if (existing found = check_existing(dir_fd, name, shown, text, sync);
      found.state != existing::verdict::absent) {
    return settle(std::move(found));
  }
  try {
    if (source) {
      switch (link_source(*source, text.size(), dir_fd, name, ref.link_error)) {
        case link_outcome::linked:
          if (sync == when_synced::before_return)
            sync_or_throw(dir_fd, "syncing the " + dir_name_ + " after linking the " + kind_);
          return publish();
        case link_outcome::taken: return settle(check_existing(dir_fd, name, shown, text, sync));
        case link_outcome::failed: break;  // a copy, below
      }
    }
    if (write_file_atomically(dir_fd, name, text, publish_mode::no_replace, "the " + kind_,
                              temp_method::automatic, sync, take_spare(dir))) {
      return publish();
    }
  } catch (const fs_error& e) {
    ref.error = e.what();
    return ref;
  }
  // Someone published the name between our check and our link: trust it only once verified.
  return settle(check_existing(dir_fd, name, shown, text, sync));
}

std::vector<std::string> artifact_store::sync(const std::vector<std::string>& sha256_hexes) const {
  std::vector<std::string> problems;
  if (sha256_hexes.empty()) return problems;
  // The directory held now: the one the saves being synced went to (a move since is for the
  // next save to notice; the files are where they were written).
  std::shared_ptr<const opened> dir;
  {
    std::lock_guard lock(mutex_);
    dir = current_;
  }
  for (const std::string& sha : sha256_hexes) {
    if (!is_sha256_hex(sha)) continue;
    const std::string name = sha + ".txt";
    private_file f = open_private_file(dir->fd.get(), name, path_of(sha).string());
    if (f.state == private_file::status::absent) continue;
    if (f.state == private_file::status::refused) {
      problems.push_back(std::move(f.reason));
      continue;
    }
    if (::fsync(f.fd.get()) != 0) problems.push_back(fs_error(errno, "syncing " + path_of(sha).string()).what());
  }
  if (::fsync(dir->fd.get()) != 0) problems.push_back(fs_error(errno, "syncing the " + dir_name_ + " " + dir_.string()).what());
  return problems;
}

std::string artifact_store::repair(std::string_view sha256_hex, const std::function<mapped_file()>& text_of) {
  if (!is_sha256_hex(sha256_hex)) return {};
  std::string why;
  const std::shared_ptr<const opened> dir = directory(why);
  if (!dir) return {};  // save() reports it when it matters
  const std::string name = std::string(sha256_hex) + ".txt";
  struct stat st {};
  // Most held results have no artifact yet: one fstatat each, nothing opened or mapped.
  if (::fstatat(dir->fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return {};
  const std::string shown = path_of(sha256_hex).string();
  private_file f = open_private_file(dir->fd.get(), name, shown);
  if (f.state != private_file::status::ok || (f.st.st_mode & 07777) != 0600) return {};
  const auto size = static_cast<std::size_t>(f.st.st_size);
  const mapped_file mapped = text_of();
  const std::string_view text = mapped.view();
  if (size == text.size() && content_equals(f.fd.get(), text)) return {};
  try {
    write_file_atomically(dir->fd.get(), name, text, publish_mode::replace, "the " + kind_);
  } catch (const fs_error& e) {
    return shown + " holds " + std::to_string(size) + " bytes, not its text, and could not be rewritten: " + e.what();
  }
  return shown + " held " + std::to_string(size) + " bytes, not its text of " + std::to_string(text.size()) +
         " (a write a crash cut short before its sync): rewritten";
}

std::optional<unique_fd> artifact_store::write_unnamed(std::string_view text) const {
  std::string why;
  const std::shared_ptr<const opened> dir = directory(why);
  if (!dir) return std::nullopt;
  try {
    std::optional<unique_fd> file = take_spare(dir);
    if (!file) file = handoff::open_unnamed(dir->fd.get(), "the " + kind_);
    if (!file) return std::nullopt;
    fill_unnamed(file->get(), text, "the " + kind_);
    return file;
  } catch (const fs_error&) {
    return std::nullopt;  // save() writes the text itself, and reports why that fails
  }
}

void artifact_store::keep_spare() const {
  // The directory held, without looking at where its path leads: making a spare never creates
  // the store again (a save() does, when it reopens), and a spare of a directory moved since is
  // not used (take_spare).
  std::shared_ptr<const opened> dir;
  {
    std::lock_guard lock(mutex_);
    if (spare_ && spare_->dir == current_) return;
    dir = current_;
  }
  std::optional<unique_fd> file;
  try {
    file = handoff::open_unnamed(dir->fd.get(), "the " + kind_);
  } catch (const fs_error&) {
    return;  // the write makes its own, and reports why that fails
  }
  if (!file) return;
  std::lock_guard lock(mutex_);
  if (current_ == dir) spare_ = spare_file{std::move(*file), dir};
}

bool artifact_store::has_spare() const {
  std::lock_guard lock(mutex_);
  return spare_.has_value();
}

std::optional<unique_fd> artifact_store::take_spare(const std::shared_ptr<const opened>& dir) const {
  std::optional<spare_file> taken;
  {
    std::lock_guard lock(mutex_);
    taken = std::exchange(spare_, std::nullopt);
  }
  if (!taken || taken->dir != dir) return std::nullopt;
  return std::move(taken->fd);
}

std::optional<mapped_file> artifact_store::open(std::string_view sha256_hex) const {
  if (!is_sha256_hex(sha256_hex)) return std::nullopt;
  const std::string name = std::string(sha256_hex) + ".txt";
  // Reads go through the directory held now, wherever its path leads: a queue whose directory
  // was moved still delivers what it acknowledged, and a read never recreates a removed store.
  // (Only save() checks the path, because only its answer names one.)
  std::shared_ptr<const opened> dir;
  {
    std::lock_guard lock(mutex_);
    dir = current_;
  }
  private_file f = open_private_file(dir->fd.get(), name, name);
  if (f.state != private_file::status::ok) return std::nullopt;
  return mapped_file(f.fd.get());
}

std::filesystem::path artifact_store::path_of(std::string_view sha256_hex) const {
  return dir_ / (std::string(sha256_hex) + ".txt");
}

}  // namespace handoff
