// N round trips of one small request against a handoffd already running (--socket), through the
// C++ client library or a raw socket, and nothing else: what `valgrind --tool=callgrind` and
// `perf stat -e instructions` count per call, on either side, once the start-up is subtracted
// (run it with two values of --calls and take the difference). docs/benchmarks.md, e2e section.
#include <unistd.h>

#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "e2e_support.hpp"
#include "handoff/client.hpp"

namespace hb = handoff::bench;
namespace hc = handoff::client;

int main(int argc, char** argv) {
  std::string socket;
  std::size_t calls = 2000;
  std::string method = "status";
  bool raw = false;
  CLI::App app{"handoff call cost: N small round trips to a running handoffd"};
  app.add_option("--socket", socket, "handoffd's socket")->required();
  app.add_option("--calls", calls, "round trips")->capture_default_str();
  app.add_option("--method", method, "status (daemon/status) or started (subagent/started)")
      ->check(CLI::IsMember({"status", "started"}))
      ->capture_default_str();
  app.add_flag("--raw", raw, "a raw socket (the request's bytes, read up to the newline) instead of the library");
  CLI11_PARSE(app, argc, argv);

  try {
    if (raw) {
      const std::string request =
          method == "status"
              ? R"({"jsonrpc":"2.0","id":1,"method":"daemon/status"})" "\n"
              : R"({"jsonrpc":"2.0","id":1,"method":"subagent/started","params":{"parentId":"p","childId":"c"}})" "\n";
      const int fd = hb::connect_unix(socket);
      std::string buffer, line;
      for (std::size_t i = 0; i < calls; ++i) {
        hb::write_all(fd, request);
        hb::read_line(fd, buffer, line);
      }
      ::close(fd);
    } else {
      hc::options opts;
      opts.socket = socket;
      hc::connection c(opts);
      handoff::rpc::started_params started;
      started.parent_id = "p";
      started.child_id = "c";
      for (std::size_t i = 0; i < calls; ++i) {
        if (method == "status")
          c.daemon_status();
        else
          c.started(started);
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "calls: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
