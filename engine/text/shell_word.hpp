// A string as one POSIX shell word, for the commands handoff prints for a model or writes into a
// harness's settings: the footers' `read` calls, the held-back note's `wait`, the hooks' command.
#pragma once

#include <string>
#include <string_view>

namespace handoff {

// Appends `word` in single quotes, a ' inside written as '\''.
void append_shell_word(std::string& out, std::string_view word);

}  // namespace handoff
