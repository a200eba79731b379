// What handoff mcp reads of a `codex exec --json` event line (Codex 0.169.0): the thread the
// child's conversation runs in, and a one-line summary of each item it completes, for
// subagent_check's preview.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace handoff::cli::codex {

struct exec_event {
  std::string thread_id;                // from `thread.started`, else ""
  std::optional<std::string> activity;  // from `item.completed`: what the item did, UTF-8, at most 2 KiB
};

// nullopt for a line that is not a JSON object, or of another type.
std::optional<exec_event> read_exec_event(std::string_view line);

}  // namespace handoff::cli::codex
