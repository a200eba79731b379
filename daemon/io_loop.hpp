// The I/O thread's loop: runs the daemon's io_context until it stops, and after the last ready
// handler keeps polling it for a short window before sleeping in epoll_wait.
//
// Why: a request that arrives while the thread sleeps costs a wake-up, and on a virtual machine
// whose other vCPU is idle that wake-up is most of a small request's round trip (30-40 µs of the
// 50 µs a `daemon/status` took, where a blocking socket ping-pong takes 12 µs; see the
// figures in docs/benchmarks.md). Clients talk in bursts (a request, its answer, the next request
// a few microseconds later), so a window of about 100 µs catches the next request of a burst on a
// thread that is still running.
//
// Cost: at most `spin` of CPU after each burst, nothing while idle. Each poll is one
// epoll_wait with a zero timeout; between polls the thread yields, so a runnable thread of the
// daemon (the pool, the queue's writer) or of a client on the same CPU goes first.
#pragma once

#include <chrono>
#include <functional>

#include <asio/io_context.hpp>

namespace handoff::daemon {

// Returns when `io` is stopped or runs out of work. `spin` zero: io.run(). The window is only
// spent while `worth_polling()` (called on this thread) says so: not while the daemon's other
// threads have work whose answer the loop would wait for anyway.
void run_io(asio::io_context& io, std::chrono::microseconds spin, const std::function<bool()>& worth_polling);

}  // namespace handoff::daemon
