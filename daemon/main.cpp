// handoffd: the long-running local daemon. See README.md and docs/protocol.md.
#include <csignal>
#include <cstdio>
#include <exception>
#include <optional>

#include <CLI/CLI.hpp>
#include <asio/io_context.hpp>
#include <asio/thread_pool.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "system/activation.hpp"
#include "system/background.hpp"
#include "system/cli_path.hpp"
#include "config.hpp"
#include "engine/store/artifact_store.hpp"
#include "engine/queue/pending_queue.hpp"
#include "runtime/heap_reuse.hpp"
#include "runtime/io_loop.hpp"
#include "net/listener.hpp"
#include "upkeep/periodic_gc.hpp"
#include "protocol/default_paths.hpp"
#include "net/server.hpp"
#include "service/service.hpp"
#include "system/service_manager.hpp"
#include "system/version.hpp"

namespace {

void setup_logging(const handoff::daemon::config& cfg) {
  auto logger = spdlog::stderr_color_mt("handoffd");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(cfg.log_level));
  if (cfg.log_format == "json")
    spdlog::set_pattern(R"({"time":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","message":"%v"})");
  else
    spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
}

// Runs the daemon until SIGTERM/SIGINT (or its idle exit); returns the exit status. `started`
// hears when the socket listens, or why it will not.
int serve(handoff::daemon::config& cfg, handoff::daemon::readiness& started) {
  using namespace handoff;
  try {
    // First, before any thread runs: it unsets the LISTEN_* variables.
    auto activated = daemon::take_activated_socket();
    // The single-instance lock before the queue is opened: a second daemon started for the same
    // socket (two clients starting one at once) must not recover the queue beside the first.
    std::optional<daemon::listener> own_socket;
    if (!activated) own_socket.emplace(cfg.socket_path);
    // A store removed or swapped while we run is opened again (or refused) by its path: the
    // footers must name files that exist where they say.
    artifact_store store(cfg.artifact_dir, when_moved::reopen);
    pending_queue queue(cfg.queue_dir);
    // The service outlives the io_context: coroutines still suspended when the loop stops
    // (an auto-delivery waiting on the pool, say) are destroyed with the io_context, and their
    // cleanup reads the service. `stopped` marks it stopping before that, whatever the exit.
    std::optional<daemon::service> service_storage;
    asio::io_context io(1);
    asio::thread_pool pool(cfg.workers);
    daemon::service& service = service_storage.emplace(cfg, io, pool, store, queue);
    struct stop_on_exit {
      daemon::service& s;
      ~stop_on_exit() { s.shutdown(); }
    } stopped{service};
    for (const auto& problem : service.recover()) spdlog::warn("queue recovery: {}", problem);
    service.start_forgetting();
    // A socket passed by the service manager is its to unlink; only one we bind is ours.
    if (activated) cfg.socket_path = activated->path;
    int listen_fd = -1;
    if (activated) {
      listen_fd = activated->socket.release();
    } else {
      own_socket->listen();
      listen_fd = own_socket->release_fd();
    }
    daemon::server server(io, cfg, service, listen_fd);
    daemon::service_manager manager(io);
    daemon::periodic_gc gc(io, pool, cfg, store, queue);
    server.on_stop([&] {
      manager.stopping();
      gc.stop();
    });
    server.start();
    gc.start();
    if (cfg.idle_exit_ms > 0 && own_socket)
      server.exit_when_idle(std::chrono::milliseconds(cfg.idle_exit_ms), *own_socket);
    else if (cfg.idle_exit_ms > 0)
      spdlog::info("--idle-exit-ms ignored: the service manager owns the socket and starts handoffd on demand");
    if (cfg.cli_path == daemon::bare_cli_name)
      spdlog::warn("no handoff CLI beside {} or in ../client; footers will rely on `handoff` being on the "
                   "parent's PATH (pass --cli-path)", rpc::own_executable().parent_path().string());
    manager.ready("serving on " + cfg.socket_path.string());
    spdlog::info("handoffd {} listening on {} (artifacts {}, queue {}, cli {})", daemon::handoff_version,
                 cfg.socket_path.string(), cfg.artifact_dir.string(), cfg.queue_dir.string(), cfg.cli_path);
    started.ready();
    daemon::run_io(io, std::chrono::microseconds(cfg.spin_us),
                   [&service, &cfg] { return service.polling_window(std::chrono::microseconds(cfg.spin_us)); });
    pool.join();
    spdlog::info("handoffd stopped");
  } catch (const daemon::already_serving& e) {
    spdlog::info("{}; not starting a second one", e.what());
    started.failed(daemon::exit_already_serving, e.what());
    return daemon::exit_already_serving;
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    started.failed(daemon::exit_failed, e.what());
    return daemon::exit_failed;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace handoff;
  daemon::keep_freed_heap();
  daemon::config cfg;
  CLI::App app{"handoffd: bounded head+tail handoff of subagent results over a Unix socket"};
  app.set_version_flag("--version", std::string("handoffd ") + daemon::handoff_version);
  daemon::add_options(app, cfg);
  CLI11_PARSE(app, argc, argv);

  try {
    daemon::resolve_defaults(cfg);
    daemon::validate(cfg);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "handoffd: %s\n", e.what());
    return daemon::exit_usage;
  }
  // Detached before the logger is made (it looks at whether stderr is a terminal) and before
  // any thread starts (fork keeps only the calling one).
  daemon::readiness started;
  if (cfg.background) {
    try {
      if (const auto status = daemon::detach(cfg.log_file, started)) return *status;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "handoffd: %s\n", e.what());
      return daemon::exit_failed;
    }
  }
  setup_logging(cfg);
  std::signal(SIGPIPE, SIG_IGN);

  return serve(cfg, started);
}
