// What the accept loop (server.hpp) needs of what it serves: the sink each connection talks to,
// the counts it drains and idles on, and the word to stop taking work. service/service.hpp is
// the one implementation; the loop knows only this, so net/ points at no layer above it.
#pragma once

#include "net/connection.hpp"
#include "runtime/in_flight.hpp"

namespace handoff::daemon {

class served : public message_sink {
 public:
  // A connection was accepted (counted in connections() until its sink hears on_closed).
  virtual void connection_opened() noexcept = 0;
  // Open connections and running auto-deliveries: a shutdown drains both to zero; an idle exit
  // waits for both to be zero.
  virtual in_flight& connections() noexcept = 0;
  virtual in_flight& flushes() noexcept = 0;
  // Refuse new work and end waits in progress: the first step of a shutdown.
  virtual void shutdown() = 0;
};

}  // namespace handoff::daemon
