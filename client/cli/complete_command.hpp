// `handoff complete`: hand a child's final text (a file or stdin, byte for byte) to handoffd.
#pragma once

#include <memory>

#include "cli/command.hpp"
#include "cli/daemon_command.hpp"

namespace handoff::cli {

command add_complete_command(CLI::App& app, std::shared_ptr<const daemon_options> daemon);

}  // namespace handoff::cli
