// `handoff hook NAME`: the hook commands `handoff setup NAME` installs, one per harness with a
// hook (cli/harness/harness.hpp).
#pragma once

#include <memory>

#include "cli/command.hpp"
#include "cli/daemon_command.hpp"

namespace handoff::cli {

command add_hook_command(CLI::App& app, std::shared_ptr<const daemon_options> daemon);

}  // namespace handoff::cli
