// The engine's batch in its wire form (protocol/messages.hpp batch_dto): what subagent/wait
// answers and parent/deliver carries.
#pragma once

#include "engine/text/batch.hpp"
#include "protocol/messages.hpp"

namespace handoff::daemon {

rpc::batch_dto to_wire(const batch& b);

}  // namespace handoff::daemon
