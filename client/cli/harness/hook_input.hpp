// What every `handoff hook NAME` reads before its harness's own work: the hook input on stdin,
// and the positive numbers its environment may set (HANDOFF_CONTEXT_WINDOW, ...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace handoff::cli {

// All of stdin, up to one byte past `most` (then the caller passes the input by).
std::string read_hook_stdin(std::size_t most);

// $name as a whole number > 0; nullopt when unset or anything else.
std::optional<std::int64_t> positive_env(const char* name);

}  // namespace handoff::cli
