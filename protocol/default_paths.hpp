// Where handoffd and its clients look by default, from the environment alone. Each returns an
// empty path when the variables it needs are unset; the caller says what to pass instead.
#pragma once

#include <filesystem>

namespace handoff::rpc {

// $XDG_RUNTIME_DIR/handoff/handoffd.sock (the socket handoffd binds and clients dial).
std::filesystem::path default_socket_path();

// ${PI_CODING_AGENT_DIR:-$HOME/.pi/agent}/cache/openpi/subagent-results: beside Pi's own agent
// cache, so the parent's ordinary `read` tool reaches the artifacts.
std::filesystem::path default_artifact_dir();

// ${XDG_STATE_HOME:-$HOME/.local/state}/handoff/queue: the durable queue of pending results.
std::filesystem::path default_queue_dir();

// This process's own executable (/proc/self/exe), absolute; empty when it cannot be read.
std::filesystem::path own_executable();

}  // namespace handoff::rpc
