// The private, content-addressed store of full texts (docs/design.md §7).
//
// <dir>/<sha256-hex>.txt holds a text byte for byte. The directory is 0700 and ours, files are
// 0600; everything is done relative to a directory fd opened with O_NOFOLLOW, so a symlink
// planted at the directory's or a file's name is never followed. Publishing is atomic and never
// overwrites: O_TMPFILE (or an O_EXCL temp), fsync, linkat, fsync of the directory. An existing
// file is reused only after its content is verified. When the caller offers a file that holds
// the text already (text_file: the queue's copy), the store hard-links that very inode instead
// (no second write, no second fsync of 1 MiB), after checking it is a regular 0600 file of ours
// of the text's size, then fsyncs the directory; when linking fails (EXDEV: another
// filesystem, EPERM, anything) it writes a copy as above.
// Before each save and open the path is checked to still lead to the directory we hold (and
// that one to be ours and 0700), and after a save that the path shown reaches the very file
// written; a footer never names a path that does not hold its text (see `when_moved`).
// A save may leave the sync to its caller (when_synced::by_caller): the file is then complete
// at its name when save() returns (so a crash of the process cannot leave it partial), and
// durable against a power loss only once sync() was called for it. subagent/wait does that
// after its answer is written and before its results leave the queue, which still holds the
// text until then; repair() mends what a power loss cut short (docs/design.md §7).
// Thread-safe: save() and open() share only the directory handle (behind a mutex), and
// concurrent saves of one text settle on one file (the loser of the link race verifies the
// winner's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/store/artifact_ref.hpp"
#include "engine/fs/atomic_file.hpp"
#include "engine/fs/mapped_file.hpp"
#include "engine/fs/posix_io.hpp"
#include "engine/fs/text_file.hpp"

namespace handoff {

// What a store does when its path no longer leads to the directory it opened (moved away,
// removed, replaced by a symlink):
enum class when_moved {
  refuse,  // save() reports saved=false (the queue's texts/: a text written anywhere but
           // under the queue's path would be lost at the next start); open() still reads
           // what was saved, through the directory held
  reopen,  // open the path again with the checks of the constructor (created when missing,
           // refused when a symlink, not ours or open to others) and use it from then on
};

class artifact_store {
 public:
  // Opens (creating with 0700, parents included) the store at absolute `dir`. Throws
  // std::runtime_error naming the problem when the directory is a symlink, not ours, open to
  // group/others, or cannot be created.
  // `kind` names what the files are in messages ("artifact": "artifact dir /x is a symlink",
  // "No space left on device while writing the artifact").
  explicit artifact_store(std::filesystem::path dir, when_moved moved = when_moved::refuse,
                          std::string kind = "artifact");
  ~artifact_store();
  artifact_store(const artifact_store&) = delete;
  artifact_store& operator=(const artifact_store&) = delete;

  // Saves `text` under its SHA-256 and returns where it is. Never throws for I/O trouble:
  // failures (ENOSPC, EROFS, EACCES, a symlink/FIFO/foreign or mismatching file at the name...)
  // come back as saved=false with the reason, and leave no temp or partial file behind.
  artifact_ref save(std::string_view text);
  // Same, when the caller already knows the hash (it is trusted; pass sha256_hex(text)), and
  // may have the text as a file (`source`, trusted to hold exactly `text`; see the contract
  // above). A refused link is not an error: the copy is written and ref.link_error says why.
  // `sync`: before_return makes the file and its name durable before save() returns (a file
  // found at the name already is synced too: it may be one a by_caller save left); by_caller
  // leaves both to sync().
  artifact_ref save(std::string_view text, std::string_view sha256_hex,
                    const std::optional<text_file>& source = std::nullopt,
                    when_synced sync = when_synced::before_return);

  // Makes the artifacts named by these hashes durable: fsyncs each file that is at its name,
  // then the directory once. Returns what failed, in plain words (empty: all durable). A name
  // with nothing at it is skipped (collected, or never saved).
  std::vector<std::string> sync(const std::vector<std::string>& sha256_hexes) const;

  // After a crash: when a regular 0600 file of ours is at the name of `sha256_hex` and does not
  // hold exactly `text` (the queue's copy), it is replaced by `text`, synced: what a power loss
  // leaves of a by_caller save whose sync() never ran. Nothing at the name, or a file that is
  // not ours, is left as it is. Returns what it did or why it could not (empty: nothing to do).
  // `text_of` is called only then (mapping every held text to look would cost a recovery more
  // than the look itself).
  std::string repair(std::string_view sha256_hex, const std::function<mapped_file()>& text_of);

  // Makes a file with no name in the store's directory, when none is held, for the next write of
  // a text (a save() that writes a copy, or write_unnamed()) to use: creating an inode on ext4
  // is slow, and slower still while its journal is busy, which that write then does
  // not wait for (subagent/wait keeps one after each answer). Nothing when the filesystem has no
  // O_TMPFILE or the directory held was removed: the write then makes its own. A spare made
  // before the directory was moved is not used, and is replaced by the next keep_spare(). Never
  // throws.
  void keep_spare() const;
  bool has_spare() const;

  // Writes `text` into a file with no name in the store's directory (the spare, when one is
  // held), fsynced, for a save() of the same text to link (text_file::fd) once its hash is
  // known: the write and the hash can then run at once. nullopt when that cannot be done here
  // (no O_TMPFILE, the disk refused): save() then writes the text itself, and reports why that
  // fails.
  std::optional<unique_fd> write_unnamed(std::string_view text) const;

  // Maps the artifact named `sha256_hex` read-only, or nullopt when it is absent, not a
  // regular file of ours, or the name is not 64 lowercase hex. Never blocks on a FIFO. Reads
  // the directory held now (the one opened last), without checking where its path leads.
  std::optional<mapped_file> open(std::string_view sha256_hex) const;

  // Absolute path an artifact with this hash has (whether or not it exists).
  std::filesystem::path path_of(std::string_view sha256_hex) const;

  const std::filesystem::path& dir() const noexcept { return dir_; }

 private:
  struct opened;  // a directory fd and the identity it had when opened
  // The directory to use now, or nullptr with `why` (see when_moved).
  std::shared_ptr<const opened> directory(std::string& why) const;

  std::filesystem::path dir_;
  when_moved moved_;
  std::string kind_;      // "artifact"
  std::string dir_name_;  // "artifact dir"
  // keep_spare()'s file when it was made in `dir`, else nullopt (a spare of another is closed).
  std::optional<unique_fd> take_spare(const std::shared_ptr<const opened>& dir) const;

  struct spare_file {
    unique_fd fd;
    std::shared_ptr<const opened> dir;  // where it was made
  };
  mutable std::mutex mutex_;  // guards current_ and spare_ only
  mutable std::shared_ptr<const opened> current_;
  mutable std::optional<spare_file> spare_;
};

}  // namespace handoff
