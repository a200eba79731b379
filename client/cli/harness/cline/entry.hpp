// cline's entry in the harness table (cli/harness/harness.hpp): `handoff setup cline` (setup.cpp
// says exactly what it writes) and `handoff hook cline` (hook.hpp), which handoff's cline plugin
// (plugin.hpp) runs for every finished `spawn_agent` call.
#pragma once

#include "cli/harness/harness.hpp"

namespace handoff::cli::cline {

setup_fn add_setup(CLI::App& app);
run_fn add_hook(CLI::App& app, std::shared_ptr<const daemon_options> daemon);

}  // namespace handoff::cli::cline
