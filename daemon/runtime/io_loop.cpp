#include "runtime/io_loop.hpp"

#include <sched.h>

namespace handoff::daemon {

void run_io(asio::io_context& io, std::chrono::microseconds spin,
            const std::function<std::chrono::microseconds()>& window) {
  if (spin.count() <= 0) {
    io.run();
    return;
  }
  using clock = std::chrono::steady_clock;
  auto last_work = clock::now();
  for (;;) {
    if (io.poll() > 0) {
      last_work = clock::now();
      continue;
    }
    if (io.stopped()) return;  // stop() called, or no work left (poll stops it then)
    if (clock::now() - last_work < window()) {
      ::sched_yield();
      continue;
    }
    // The window has passed: sleep until something is ready, then spin again after it.
    if (io.run_one() == 0 && io.stopped()) return;
    last_work = clock::now();
  }
}

}  // namespace handoff::daemon
