// Where handoffd and its clients look by default, from the environment alone (the socket:
// socket_location.hpp). Each returns an empty path when the variables it needs are unset; the
// caller says what to pass instead.
#pragma once

#include <filesystem>

namespace handoff::rpc {

// ${XDG_CACHE_HOME:-$HOME/.cache}/handoff/results: the artifact store. A cache of handoff's own,
// belonging to no harness; each harness's read tool is allowed there by its setup.
// XDG_CACHE_HOME counts only when absolute (the XDG spec: a relative one is ignored).
std::filesystem::path default_artifact_dir();

// ${PI_CODING_AGENT_DIR:-$HOME/.pi/agent}/cache/openpi/subagent-results: the store's default
// before it had a home of its own. Footers delivered then name files there, so while it exists
// handoffd reads it and collects it until it is empty (docs/design.md §7); nothing creates it.
std::filesystem::path legacy_artifact_dir();

// ${XDG_STATE_HOME:-$HOME/.local/state}/handoff/queue: the durable queue of pending results.
std::filesystem::path default_queue_dir();

// This process's own executable (/proc/self/exe), absolute; empty when it cannot be read.
std::filesystem::path own_executable();

}  // namespace handoff::rpc
