// Claude Code's entry in the harness table (cli/harness/harness.hpp): `handoff setup claude-code`
// (settings.hpp says exactly what it writes) and `handoff hook claude-code [--deliver]`
// (hook.hpp, background.hpp).
#pragma once

#include "cli/harness/harness.hpp"

namespace handoff::cli {

run_fn add_claude_code_setup(CLI::App& app);
run_fn add_claude_code_hook(CLI::App& app, std::shared_ptr<const daemon_options> daemon);

}  // namespace handoff::cli
