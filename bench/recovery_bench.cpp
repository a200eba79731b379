// Restart after a crash with a large queue: a real handoffd completes 10,000 results of 4 KiB to
// 64 KiB (the load benchmark's mix, bench/result_mix.hpp) for 50 parents and is killed with
// SIGKILL, so every start after that is a crash recovery. Then, several times: the floor (one
// thread reads every regular file under the queue directory, and again hashing each with
// SHA-256), then handoffd is started and timed from just before its fork until (i) the socket
// answers daemon/status and (ii) daemon/status reports every result held (and, if the daemon
// reports a `recovering` flag, that it is false), and it is killed again. The queue directory is
// opaque here: whatever layout the queue has, the floor reads all of it.
//
// Warm cache, for the daemon and the floor alike: the files were just written and nothing is
// dropped from the page cache between runs. Fails (exit 1) when a completion is refused, when the
// daemon exits, or when the recovered queue does not reach the count completed.
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench_daemon.hpp"
#include "client_threads.hpp"
#include "disk_floor.hpp"
#include "e2e_support.hpp"
#include "handoff/client.hpp"
#include "result_mix.hpp"

namespace hb = handoff::bench;
namespace hc = handoff::client;

namespace {

struct settings : hb::daemon_options {
  std::size_t clients = 8;        // connections completing the results
  std::size_t results = 10'000;   // results held when the daemon is killed
  std::size_t repetitions = 5;    // timed restarts; the medians are over these
  double timeout_s = 60;          // how long one restart may take to recover every result
  hb::result_mix mix;
};

// How one restart went, seconds from just before handoffd's fork.
struct restart_timing {
  double answer_s = 0;     // daemon/status first answered
  double recovered_s = 0;  // daemon/status first reported every result held, recovery done
  hb::process_memory memory;  // right after recovery
};

double seconds_since(hb::bench_clock::time_point t) {
  return std::chrono::duration<double>(hb::bench_clock::now() - t).count();
}

// The daemon's `recovering` flag (in the status result or its `queue`), if it reports one.
std::optional<bool> recovering(const nlohmann::json& status) {
  for (const auto* where : {&status, status.contains("queue") ? &status.at("queue") : nullptr})
    if (where != nullptr && where->contains("recovering") && where->at("recovering").is_boolean())
      return where->at("recovering").get<bool>();
  return std::nullopt;
}

std::string describe(const nlohmann::json& status) {
  const auto flag = recovering(status);
  return std::to_string(status.at("queue").at("results").get<std::size_t>()) + " results held" +
         (flag ? std::string(", recovering: ") + (*flag ? "true" : "false") : "");
}

restart_timing time_restart(hb::bench_daemon& daemon, std::size_t expected, double timeout_s) {
  hc::options opts;
  opts.socket = daemon.socket();
  const auto launched = daemon.launch();
  const auto gone = [&] { return "handoffd exited during recovery; see " + (daemon.dir() / "handoffd.log").string(); };
  restart_timing timing;

  // (i) Until daemon/status is answered: connecting fails while the socket is stale or absent
  // (checked every millisecond); a connection the daemon accepts waits for its answer.
  std::optional<hc::connection> c;
  nlohmann::json status;
  for (;;) {
    try {
      if (!c) c.emplace(opts);
      status = handoff::rpc::encode(c->daemon_status());
      break;
    } catch (const hc::client_error&) {
      c.reset();
    }
    if (!daemon.running()) throw std::runtime_error(gone());
    if (seconds_since(launched) > timeout_s)
      throw std::runtime_error("handoffd did not answer daemon/status within " + hb::format_us(timeout_s * 1e6));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  timing.answer_s = seconds_since(launched);

  // (ii) Until every result is held and no recovery is reported in progress (checked every 2 ms).
  for (;;) {
    const auto held = status.at("queue").at("results").get<std::size_t>();
    const auto flag = recovering(status);
    if (held == expected && flag.value_or(false) == false) break;
    if (held > expected || (flag == false && held != expected))
      throw std::runtime_error("recovery finished with " + describe(status) + ", not " + std::to_string(expected));
    if (seconds_since(launched) > timeout_s)
      throw std::runtime_error("the queue did not recover " + std::to_string(expected) + " results within " +
                               hb::format_us(timeout_s * 1e6) + " (last daemon/status: " + describe(status) + ")");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (!daemon.running()) throw std::runtime_error(gone());
    status = handoff::rpc::encode(c->daemon_status());
  }
  timing.recovered_s = seconds_since(launched);
  timing.memory = daemon.memory();
  return timing;
}

std::string ms(double seconds) { return hb::format_us(seconds * 1e6); }

std::vector<std::string> tree_row(const std::string& when, const hb::tree_size& t) {
  return {when, std::to_string(t.files), hb::format_mib(t.bytes / 1024), hb::format_mib(t.allocated_bytes / 1024),
          std::to_string(t.directories)};
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  CLI::App app{"handoff recovery: restart after a crash with a large queue, against reading the queue's files"};
  hb::add_daemon_options(app, s, argv[0]);
  app.add_option("--clients", s.clients, "Concurrent connections completing the results")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--results", s.results, "Results held when the daemon is killed")->capture_default_str()->check(CLI::PositiveNumber);
  hb::add_mix_options(app, s.mix);
  app.add_option("--repetitions", s.repetitions, "Timed restarts (medians over these)")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--timeout-s", s.timeout_s, "Longest a restart may take to recover every result, s")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    hb::bench_daemon daemon(s.handoffd, s.dir);
    std::cout << "## handoff restart after a crash\n\n";
    hb::print_environment(daemon.dir(), s.handoffd);

    hb::phase filled;
    hb::complete_results(daemon.socket(), s.clients, s.mix, s.results, [&](std::size_t i) { return s.mix.text(i); },
                         filled);
    hb::expect_held(daemon.socket(), s.results, "before the crash");
    daemon.kill_hard();
    const auto at_crash = hb::measure_tree(daemon.queue_dir());

    std::vector<double> answer, recovered, read, read_hash, rss;
    std::vector<std::vector<std::string>> rows;
    for (std::size_t r = 0; r < s.repetitions; ++r) {
      const auto plain = hb::read_floor(daemon.queue_dir(), false);
      const auto hashed = hb::read_floor(daemon.queue_dir(), true);
      const auto timing = time_restart(daemon, s.results, s.timeout_s);
      daemon.kill_hard();
      answer.push_back(timing.answer_s);
      recovered.push_back(timing.recovered_s);
      read.push_back(plain.seconds);
      read_hash.push_back(hashed.seconds);
      rss.push_back(static_cast<double>(timing.memory.rss_kib));
      rows.push_back({std::to_string(r + 1), ms(timing.answer_s), ms(timing.recovered_s), ms(plain.seconds),
                      ms(hashed.seconds), hb::format_mib(timing.memory.rss_kib),
                      std::to_string(plain.files) + " files, " + hb::format_mib(plain.bytes / 1024)});
    }
    const auto after = hb::measure_tree(daemon.queue_dir());

    std::cout << "### " << s.results << " results of " << s.mix.describe() << " held for " << s.mix.parents
              << " parents, handoffd killed with SIGKILL\n\n"
              << "Completed by " << s.clients << " clients in " << ms(filled.seconds) << " ("
              << static_cast<long long>(static_cast<double>(filled.count) / filled.seconds + 0.5)
              << " /s). Then " << s.repetitions << " times: the floors (one thread reads every regular file "
              << "under the queue directory: open, read fully, close; then the same with SHA-256 of each file), "
              << "then handoffd started and timed from just before its fork, then SIGKILL again. Warm page cache "
              << "for the daemon and the floors alike: the files were just written and nothing is dropped.\n\n";
    hb::print_table({"queue directory", "files", "bytes", "on disk (allocated)", "directories"},
                    {tree_row("at the crash", at_crash), tree_row("after the last recovery", after)});
    hb::print_table({"run", "socket answers `daemon/status`", "all results held", "floor: read every file",
                     "floor: read + SHA-256", "RSS after recovery", "floor read"},
                    rows);
    const double floor = hb::median(read), floor_hash = hb::median(read_hash);
    auto row = [&](const std::string& what, double seconds) {
      return std::vector<std::string>{what, ms(seconds), hb::format_ratio(seconds / floor),
                                      hb::format_ratio(seconds / floor_hash)};
    };
    hb::print_table({"median of " + std::to_string(s.repetitions), "time", "against the read floor",
                     "against read + SHA-256"},
                    {row("socket answers `daemon/status` (from fork)", hb::median(answer)),
                     row("queue fully recovered: " + std::to_string(s.results) + " results held", hb::median(recovered)),
                     row("floor: read every file under the queue", floor),
                     row("floor: read + SHA-256 of every file", floor_hash)});
    std::cout << "Daemon RSS right after recovery: " << hb::format_mib(static_cast<std::size_t>(hb::median(rss)))
              << " (median).\n\n";
  } catch (const std::exception& e) {
    std::cerr << "recovery benchmark failed: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
