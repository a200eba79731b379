// Contract 2 of design.md: the private, content-addressed store of full texts.
//
// <dir>/<sha256-hex>.txt holds a text byte for byte. The directory is 0700 and ours, files are
// 0600; everything is done relative to a directory fd opened with O_NOFOLLOW, so a symlink
// planted at the directory's or a file's name is never followed. Publishing is atomic and never
// overwrites: O_TMPFILE (or an O_EXCL temp), fsync, linkat, fsync of the directory. An existing
// file is reused only after its content is verified.
// Thread-safe: save() and open() touch no shared state but the directory fd, and concurrent
// saves of one text settle on one file (the loser of the link race verifies the winner's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "engine/mapped_file.hpp"
#include "engine/projection.hpp"

namespace handoff {

class artifact_store {
 public:
  // Opens (creating with 0700, parents included) the store at absolute `dir`. Throws
  // std::runtime_error naming the problem when the directory is a symlink, not ours, open to
  // group/others, or cannot be created.
  explicit artifact_store(std::filesystem::path dir);
  ~artifact_store();
  artifact_store(const artifact_store&) = delete;
  artifact_store& operator=(const artifact_store&) = delete;

  // Saves `text` under its SHA-256 and returns where it is. Never throws for I/O trouble:
  // failures (ENOSPC, EROFS, EACCES, a symlink/FIFO/foreign or mismatching file at the name...)
  // come back as saved=false with the reason, and leave no temp or partial file behind.
  artifact_ref save(std::string_view text);
  // Same, when the caller already knows the hash (it is trusted; pass sha256_hex(text)).
  artifact_ref save(std::string_view text, std::string_view sha256_hex);

  // Maps the artifact named `sha256_hex` read-only, or nullopt when it is absent, not a
  // regular file of ours, or the name is not 64 lowercase hex. Never blocks on a FIFO.
  std::optional<mapped_file> open(std::string_view sha256_hex) const;

  // Absolute path an artifact with this hash has (whether or not it exists).
  std::filesystem::path path_of(std::string_view sha256_hex) const;

  const std::filesystem::path& dir() const noexcept { return dir_; }

 private:
  std::filesystem::path dir_;
  int dir_fd_ = -1;
};

}  // namespace handoff
