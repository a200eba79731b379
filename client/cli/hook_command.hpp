// `handoff hook claude-code`: the hook command `handoff setup claude-code` installs
// (claude_code_hook.hpp says what it does).
#pragma once

#include <memory>

#include "cli/command.hpp"
#include "cli/daemon_command.hpp"

namespace handoff::cli {

command add_hook_command(CLI::App& app, std::shared_ptr<const daemon_options> daemon);

}  // namespace handoff::cli
