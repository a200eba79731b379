// `handoff read`: page through an artifact (a cut result's full text) by line, like Pi's `read`.
#pragma once

#include <memory>

#include "cli/command.hpp"
#include "cli/daemon_command.hpp"

namespace handoff::cli {

command add_read_command(CLI::App& app, std::shared_ptr<const daemon_options> daemon);

}  // namespace handoff::cli
