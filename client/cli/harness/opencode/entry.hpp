// opencode's entry in the harness table (cli/harness/harness.hpp): `handoff setup opencode`
// (settings.hpp says exactly what it writes) and `handoff hook opencode` (hook.hpp), which
// handoff's opencode plugin (plugin.hpp) runs for every finished `task` call. Kilo Code's CLI, an
// opencode fork, loads the same plugin: `handoff setup kilo` writes it in Kilo's config.
#pragma once

#include "cli/harness/harness.hpp"

namespace handoff::cli::opencode {

setup_fn add_setup(CLI::App& app);
setup_fn add_kilo_setup(CLI::App& app);
run_fn add_hook(CLI::App& app, std::shared_ptr<const daemon_options> daemon);

}  // namespace handoff::cli::opencode
