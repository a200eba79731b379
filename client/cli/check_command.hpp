// `handoff check`: one child's state and a bounded preview of its output.
#pragma once

#include <memory>

#include "cli/command.hpp"
#include "cli/daemon_command.hpp"

namespace handoff::cli {

command add_check_command(CLI::App& app, std::shared_ptr<const daemon_options> daemon);

}  // namespace handoff::cli
