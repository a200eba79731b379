// `handoff watch`: be a parent's endpoint; print and acknowledge each auto-delivered batch.
#pragma once

#include <memory>

#include "cli/command.hpp"
#include "cli/daemon_command.hpp"

namespace handoff::cli {

command add_watch_command(CLI::App& app, std::shared_ptr<const daemon_options> daemon);

}  // namespace handoff::cli
