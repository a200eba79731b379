// `handoff doctor`: is handoff set up right on this machine, and if not, what to do about it.
#pragma once

#include <memory>

#include "cli/command.hpp"
#include "cli/daemon_command.hpp"

namespace handoff::cli {

command add_doctor_command(CLI::App& app, std::shared_ptr<const daemon_options> daemon);

}  // namespace handoff::cli
