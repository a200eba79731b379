// What a harness's hook or server reads before its own work: the hook input on stdin, and the
// numbers its environment may set (HANDOFF_CONTEXT_WINDOW, HANDOFF_CODEX_MAX_RUNNING, ...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace handoff::cli {

// All of stdin, up to one byte past `most` (then the caller passes the input by).
std::string read_hook_stdin(std::size_t most);

// $name as a whole number > 0; nullopt when unset or anything else. For a hook, which must never
// fail its harness over a setting: a bad one is as if unset.
std::optional<std::int64_t> positive_env(const char* name);

// $name as a whole number from `low` to `high`; `fallback` when unset or empty. Anything else
// throws std::invalid_argument naming the variable and the range: for a server, which refuses to
// start rather than run with a setting other than the one asked for.
std::size_t bounded_env(const char* name, std::size_t fallback, std::size_t low, std::size_t high);

}  // namespace handoff::cli
