// The I/O thread's loop: runs the daemon's io_context until it stops, and after the last ready
// handler keeps polling it for a short window before sleeping in epoll_wait.
//
// Why: a request that arrives while the thread sleeps costs a wake-up, and on a virtual machine
// whose other vCPU is idle that wake-up is most of a small request's round trip (the figures,
// against a blocking socket ping-pong, are in docs/benchmarks.md). Clients talk in bursts (a
// request, its answer, the next request a few microseconds later), so a short window (--spin-us)
// catches the next request of a burst on a thread that is still running.
//
// Cost: at most the window of CPU after each handler, nothing while idle. Each poll is one
// epoll_wait with a zero timeout; between polls the thread yields, so a runnable thread of the
// daemon (the pool, the queue's writer) or of a client on the same CPU goes first.
//
// The window is asked for at each poll: the service makes it longer while the pool works on
// one client's answer (a completion's fdatasync, a wait's batch), so that answer is taken
// without a wake-up, and zero while it works on several (service::polling_window).
#pragma once

#include <chrono>
#include <functional>

#include <asio/io_context.hpp>

namespace handoff::daemon {

// Returns when `io` is stopped or runs out of work. `spin` zero: io.run(). Otherwise the
// thread polls while less than `window()` (called on this thread) has passed since the last
// handler ran, then sleeps until the next one is ready.
void run_io(asio::io_context& io, std::chrono::microseconds spin,
            const std::function<std::chrono::microseconds()>& window);

}  // namespace handoff::daemon
