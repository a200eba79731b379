// Load: N concurrent clients complete results of 4 KiB to 64 KiB (a fixed pseudo-random mix)
// for P parents against one handoffd with its durable queue as shipped (every completion is
// written and fsynced before it is answered), then drain them with subagent/wait. Reports
// completions per second, per-call latency under load, and the daemon's peak RSS (VmHWM).
#include <atomic>
#include <barrier>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench_daemon.hpp"
#include "e2e_support.hpp"
#include "handoff/client.hpp"

namespace hb = handoff::bench;
namespace hc = handoff::client;

namespace {

struct settings {
  std::filesystem::path handoffd = hb::default_handoffd();
  std::filesystem::path dir;
  std::size_t clients = 8;
  std::size_t parents = 50;
  std::size_t completions = 2000;
  std::size_t min_bytes = 4 * 1024;
  std::size_t max_bytes = 64 * 1024;
};

std::size_t size_of(const settings& s, std::size_t i) {
  return s.min_bytes + hb::mix(i) % (s.max_bytes - s.min_bytes + 1);
}
std::string parent_of(const settings& s, std::size_t i) { return "parent-" + std::to_string(i % s.parents); }
std::string child_of(std::size_t i) { return "child-" + std::to_string(i); }

struct phase {
  double seconds = 0;
  std::size_t count = 0;
  hb::samples latency;
  std::mutex mutex;
};

// Runs `work(client_index, connection, samples)` on every client at once; returns wall seconds.
template <class Work>
void run_clients(const settings& s, const hb::bench_daemon& daemon, phase& out, Work work) {
  std::barrier start(static_cast<std::ptrdiff_t>(s.clients + 1));
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < s.clients; ++t) {
    threads.emplace_back([&, t] {
      hc::options opts;
      opts.socket = daemon.socket();
      opts.call_timeout = std::chrono::minutes(5);
      hb::samples mine;
      std::size_t done = 0;
      try {
        hc::connection c(opts);
        start.arrive_and_wait();
        done = work(t, c, mine);
      } catch (const std::exception& e) {
        std::cerr << "client " << t << ": " << e.what() << '\n';
        failed = true;
      }
      std::lock_guard lock(out.mutex);
      out.count += done;
      out.latency.merge(mine);
    });
  }
  start.arrive_and_wait();
  const auto began = hb::bench_clock::now();
  for (auto& th : threads) th.join();
  out.seconds = std::chrono::duration<double>(hb::bench_clock::now() - began).count();
  if (failed) throw std::runtime_error("a client failed");
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  s.dir = std::filesystem::path(argv[0]).parent_path() / "bench-data";
  CLI::App app{"handoff load: concurrent completions through the durable queue, then waits"};
  app.add_option("--handoffd", s.handoffd, "handoffd to run")->capture_default_str();
  app.add_option("--dir", s.dir, "Directory (on a real disk) for the daemon's store and queue")->capture_default_str();
  app.add_option("--clients", s.clients, "Concurrent client connections")->capture_default_str();
  app.add_option("--parents", s.parents, "Parents the completions are spread over")->capture_default_str();
  app.add_option("--completions", s.completions, "Completions in all")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    hb::bench_daemon daemon(s.handoffd, s.dir);
    std::cout << "## handoff under load\n\n";
    hb::print_environment(daemon.dir(), s.handoffd);
    const auto idle = daemon.memory();

    // Texts are made before the clock starts: client t sends completions t, t + N, t + 2N...
    std::vector<std::vector<std::string>> texts(s.clients);
    std::size_t total_bytes = 0;
    for (std::size_t i = 0; i < s.completions; ++i) {
      texts[i % s.clients].push_back(hb::report_text(size_of(s, i), i));
      total_bytes += texts[i % s.clients].back().size();
    }

    phase complete;
    run_clients(s, daemon, complete, [&](std::size_t t, hc::connection& c, hb::samples& lat) {
      std::size_t n = 0;
      for (std::size_t i = t, k = 0; i < s.completions; i += s.clients, ++k) {
        handoff::rpc::completed_params done;
        done.parent_id = parent_of(s, i);
        done.child_id = child_of(i);
        done.status = "done";
        done.final_text = std::move(texts[t][k]);
        lat.add(hb::time_once([&] { c.completed(done); }));
        ++n;
      }
      return n;
    });
    const auto after_complete = daemon.memory();

    // Drain: client t waits for the parents t, t + N...; a wait takes up to 64 children and
    // returns what fits in its batch, so it is repeated until every child was delivered.
    phase drain;
    run_clients(s, daemon, drain, [&](std::size_t t, hc::connection& c, hb::samples& lat) {
      std::size_t delivered = 0;
      for (std::size_t p = t; p < s.parents; p += s.clients) {
        std::vector<std::string> left;
        for (std::size_t i = p; i < s.completions; i += s.parents) left.push_back(child_of(i));
        while (!left.empty()) {
          handoff::rpc::wait_params wait;
          wait.parent_id = "parent-" + std::to_string(p);
          wait.child_ids.assign(left.begin(), left.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(left.size(), 64)));
          handoff::rpc::wait_result got;
          lat.add(hb::time_once([&] { got = c.wait(wait); }));
          if (got.batch.sections.empty()) throw std::runtime_error("a wait delivered nothing");
          for (const auto& section : got.batch.sections) std::erase(left, section.child_id);
          delivered += got.batch.sections.size();
        }
      }
      return delivered;
    });
    const auto after_drain = daemon.memory();

    std::cout << "### " << s.clients << " clients, " << s.parents << " parents, " << s.completions
              << " results of " << hb::format_bytes(s.min_bytes) << " to " << hb::format_bytes(s.max_bytes)
              << " (" << total_bytes / s.completions << " B on average)\n\n";
    auto rate = [](const phase& p) {
      return std::to_string(static_cast<long long>(static_cast<double>(p.count) / p.seconds + 0.5)) + " /s";
    };
    hb::print_table({"phase", "calls", "results", "wall", "results per second", "call p50", "call p99"},
                    {{"`subagent/completed` (durable: text + record fsynced)", std::to_string(complete.latency.size()),
                      std::to_string(complete.count), hb::format_us(complete.seconds * 1e6), rate(complete),
                      hb::format_us(complete.latency.p50()), hb::format_us(complete.latency.p99())},
                     {"`subagent/wait` drain (<= 64 children a call)", std::to_string(drain.latency.size()),
                      std::to_string(drain.count), hb::format_us(drain.seconds * 1e6), rate(drain),
                      hb::format_us(drain.latency.p50()), hb::format_us(drain.latency.p99())}});
    auto mib = [](std::size_t kib) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(kib) / 1024.0);
      return std::string(buf);
    };
    hb::print_table({"daemon memory", "VmRSS", "VmHWM (peak)"},
                    {{"idle, at start", mib(idle.rss_kib), mib(idle.hwm_kib)},
                     {"after the completions", mib(after_complete.rss_kib), mib(after_complete.hwm_kib)},
                     {"after the drain", mib(after_drain.rss_kib), mib(after_drain.hwm_kib)}});
  } catch (const std::exception& e) {
    std::cerr << "load benchmark failed: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
