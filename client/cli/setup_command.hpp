// `handoff setup claude-code [--project DIR] [--remove] [--dry-run]`:
// installs handoff's hooks into Claude Code's settings, or takes them out again
// (claude_code_settings.hpp says exactly what it writes).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/command.hpp"

namespace handoff::cli {

command add_setup_command(CLI::App& app);

}  // namespace handoff::cli
