// GitHub Copilot CLI's entry in the harness table (cli/harness/harness.hpp): `handoff setup
// copilot` (settings.hpp says exactly what it writes) and `handoff hook copilot` (hook.hpp).
#pragma once

#include "cli/harness/harness.hpp"

namespace handoff::cli::copilot {

setup_fn add_setup(CLI::App& app);
run_fn add_hook(CLI::App& app, std::shared_ptr<const daemon_options> daemon);

}  // namespace handoff::cli::copilot
