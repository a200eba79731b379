// The service's part of a graceful stop (server.cpp drives it): refuse new work, end the waits
// in progress (they answer `shutting_down`; their results stay queued), stop forgetting. Replies
// and auto-deliveries already under way finish; the server waits for them.
#include "service.hpp"

namespace handoff::daemon {

void service::shutdown() {
  stopping_ = true;
  deliveries_.stop();
  forget_timer_.cancel();
  ledger_.wake_all();
}

}  // namespace handoff::daemon
