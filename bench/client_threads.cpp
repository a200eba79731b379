#include "client_threads.hpp"

#include <atomic>
#include <barrier>
#include <chrono>
#include <iostream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace handoff::bench {

void run_clients(const std::filesystem::path& socket, std::size_t clients, phase& out, const client_work& work) {
  std::barrier start(static_cast<std::ptrdiff_t>(clients + 1));
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < clients; ++t) {
    threads.emplace_back([&, t] {
      client::options opts;
      opts.socket = socket;
      opts.call_timeout = std::chrono::minutes(5);
      samples mine;
      std::size_t done = 0;
      bool arrived = false;
      try {
        client::connection c(opts);
        start.arrive_and_wait();
        arrived = true;
        done = work(t, c, mine);
      } catch (const std::exception& e) {
        std::cerr << "client " << t << ": " << e.what() << '\n';
        failed = true;
      }
      if (!arrived) start.arrive_and_wait();  // a client that could not connect must not hang the rest
      std::lock_guard lock(out.mutex);
      out.count += done;
      out.latency.merge(mine);
    });
  }
  start.arrive_and_wait();
  const auto began = bench_clock::now();
  for (auto& th : threads) th.join();
  out.seconds = std::chrono::duration<double>(bench_clock::now() - began).count();
  if (failed) throw std::runtime_error("a client failed (see above)");
}

void complete_results(const std::filesystem::path& socket, std::size_t clients, const result_mix& mix,
                      std::size_t count, const std::function<std::string(std::size_t)>& text_of, phase& out) {
  run_clients(socket, clients, out, [&](std::size_t t, client::connection& c, samples& latency) {
    std::size_t n = 0;
    for (std::size_t i = t; i < count; i += clients) {
      rpc::completed_params done;
      done.parent_id = mix.parent(i);
      done.child_id = mix.child(i);
      done.status = "done";
      done.final_text = text_of(i);
      rpc::completed_result got;
      latency.add(time_once([&] { got = c.completed(done); }));
      if (got.duplicate)
        throw std::runtime_error("the daemon took " + done.child_id + " of " + done.parent_id + " as a duplicate");
      ++n;
    }
    return n;
  });
}

void expect_held(const std::filesystem::path& socket, std::size_t expected, const std::string& when) {
  client::options opts;
  opts.socket = socket;
  client::connection c(opts);
  const auto held = c.daemon_status().queue.results;
  if (held != expected)
    throw std::runtime_error(when + " the queue holds " + std::to_string(held) + " results, not " +
                             std::to_string(expected));
}

}  // namespace handoff::bench
