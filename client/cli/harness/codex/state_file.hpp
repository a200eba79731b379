// The children of one parent thread on disk: STATE_DIR/<parent>.json, so that a server started
// later for the same thread (Codex resumed after a crash) still knows them, and a wait without
// ids still finds their results in handoffd's queue.
//
// Contract: save_children() writes the file whole (0600, the directory made 0700) with
// engine/fs/atomic_file: temp file, fsync, rename, fsync of the directory; a reader sees the old
// file or the new one. It never throws: a state dir that cannot be written costs only the
// resumption above. load_children() reads it back; a turn that was waiting, queued or running
// when its server died comes back finished with an error saying so, and a finished turn whose
// result handoffd had not taken comes back as an error saying the answer was lost; both are to
// be reported. A file that is absent, unreadable or not this shape gives no children.
//
// {"children":[{"id","title","cwd","model","thread",
//   "turns":[{"id","n","title","phase","status","received","reported"}]}]}
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/harness/codex/turn.hpp"

namespace handoff::cli::codex {

std::vector<std::unique_ptr<child>> load_children(const std::filesystem::path& state_dir, const std::string& parent);

// `children`: every child of `parent`.
void save_children(const std::filesystem::path& state_dir, const std::string& parent,
                   const std::vector<const child*>& children);

}  // namespace handoff::cli::codex
