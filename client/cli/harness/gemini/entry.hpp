// Gemini CLI's entry in the harness table (cli/harness/harness.hpp): `handoff setup gemini`
// (settings.hpp says exactly what it writes) and `handoff hook gemini` (hook.hpp).
#pragma once

#include "cli/harness/harness.hpp"

namespace handoff::cli::gemini {

setup_fn add_setup(CLI::App& app);
run_fn add_hook(CLI::App& app, std::shared_ptr<const daemon_options> daemon);

}  // namespace handoff::cli::gemini
