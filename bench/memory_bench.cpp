// Memory of handoffd: idle, then with many pending results (completed, never waited for nor
// delivered), and again after a restart has recovered them from the queue. Pending texts live on
// disk (queue/texts), so the resident set should not grow with them: target under 64 MiB with
// 1,000 pending results of 1 MiB.
#include <iostream>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "bench_daemon.hpp"
#include "e2e_support.hpp"
#include "handoff/client.hpp"

namespace hb = handoff::bench;
namespace hc = handoff::client;

namespace {

struct settings : hb::daemon_options {
  std::size_t results = 1000;
  std::size_t bytes = 1024 * 1024;
  double target_mib = 64;
};

std::vector<std::string> row(const std::string& what, const hb::process_memory& m, const std::string& target) {
  return {what, hb::format_mib(m.rss_kib), hb::format_mib(m.anon_kib), hb::format_mib(m.file_kib), hb::format_mib(m.hwm_kib), target};
}

hb::process_memory settled_memory(const hb::bench_daemon& daemon, hc::connection& c) {
  c.daemon_status();  // the daemon has served a request since the last change
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  return daemon.memory();
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  CLI::App app{"handoff memory: idle RSS, and RSS with many pending results"};
  hb::add_daemon_options(app, s, argv[0]);
  app.add_option("--results", s.results, "Pending results to hold")->capture_default_str();
  app.add_option("--bytes", s.bytes, "Bytes of each result")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    hb::bench_daemon daemon(s.handoffd, s.dir);
    std::cout << "## handoff memory\n\n";
    hb::print_environment(daemon.dir(), s.handoffd);
    hc::options opts;
    opts.socket = daemon.socket();
    std::vector<std::vector<std::string>> rows;
    {
      hc::connection c(opts);
      rows.push_back(row("idle (after one `daemon/status`)", settled_memory(daemon, c), ""));
      const auto began = hb::bench_clock::now();
      for (std::size_t i = 0; i < s.results; ++i) {
        handoff::rpc::completed_params done;
        done.parent_id = "memory-parent";
        done.child_id = "child-" + std::to_string(i);
        done.status = "done";
        done.final_text = hb::report_text(s.bytes, 7'000'000 + i);
        c.completed(done);
      }
      const double seconds = std::chrono::duration<double>(hb::bench_clock::now() - began).count();
      const auto pending = settled_memory(daemon, c);
      const auto status = c.daemon_status();
      const auto held = status.queue.results;
      if (held != s.results)
        throw std::runtime_error("the queue holds " + std::to_string(held) + " results, not " + std::to_string(s.results));
      rows.push_back(row(std::to_string(s.results) + " pending results of " + hb::format_bytes(s.bytes), pending,
                         "< " + std::to_string(static_cast<int>(s.target_mib)) + " MiB"));
      std::cout << "Completed " << s.results << " results of " << hb::format_bytes(s.bytes) << " in "
                << hb::format_us(seconds * 1e6) << " (one client, one at a time).\n\n";
    }
    daemon.restart();
    {
      hc::connection c(opts);
      rows.push_back(row("after a restart recovered them", settled_memory(daemon, c), ""));
    }
    hb::print_table({"daemon state", "VmRSS", "RssAnon", "RssFile", "VmHWM (peak)", "target"}, rows);
  } catch (const std::exception& e) {
    std::cerr << "memory benchmark failed: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
