#include "cli/daemon_command.hpp"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>

namespace handoff::cli {
namespace {

constexpr const char* help_footer =
    "Exit status:\n"
    "  0  success\n"
    "  1  handoffd refused, timed out or answered with an error; or an input/output error\n"
    "  2  usage error: bad options or arguments\n"
    "  3  handoffd is not running at the socket\n"
    "  4  wait: --timeout-ms passed with children still pending\n"
    "\n"
    "Children: what a child reports (started, progress, complete) names it with --child C;\n"
    "what the parent asks (wait, check, cancel) lists the children after --parent P.\n"
    "\n"
    "Socket: --socket PATH, else $HANDOFF_SOCKET, else $XDG_RUNTIME_DIR/handoff/handoffd.sock,\n"
    "else ${TMPDIR:-/tmp}/handoff-<uid>/handoffd.sock (that directory made 0700, refused when it\n"
    "is a symlink, another user's or open to others). handoff doctor says which one and why.\n"
    "When nothing answers there, every command but status and doctor starts handoffd in the\n"
    "background (HANDOFF_AUTOSTART=0: never; HANDOFF_DAEMON: which handoffd; it exits after\n"
    "HANDOFF_IDLE_EXIT_MS, default 600000, with no client).";

std::string describe(const client::client_error& e) {
  if (e.kind() != client::error_kind::rpc) return e.what();
  return std::string(e.what()) + " (JSON-RPC error " + std::to_string(static_cast<int>(e.code())) + ")";
}

}  // namespace

std::shared_ptr<const daemon_options> add_daemon_options(CLI::App& app) {
  auto options = std::make_shared<daemon_options>();
  app.add_option("--socket", options->socket, "handoffd's Unix socket [$HANDOFF_SOCKET, else "
                                              "$XDG_RUNTIME_DIR/handoff/handoffd.sock, else "
                                              "${TMPDIR:-/tmp}/handoff-<uid>/handoffd.sock]");
  app.footer(help_footer);
  return options;
}

CLI::App* add_daemon_subcommand(CLI::App& app, const std::string& name, const std::string& description) {
  CLI::App* sub = app.add_subcommand(name, description);
  sub->fallthrough();  // options it does not know (--socket) go to the top-level app
  return sub;
}

int with_connection(std::string_view name, const daemon_options& options,
                    const std::function<int(client::connection&)>& body, daemon_start start) {
  try {
    client::options settings;
    settings.socket = options.socket;
    if (start == daemon_start::if_absent) settings.start = client::autostart_from_environment();
    client::connection c(settings);
    return body(c);
  } catch (const client::client_error& e) {
    report(name, describe(e));
    return e.kind() == client::error_kind::daemon_absent ? exit_daemon_absent : exit_failure;
  } catch (const std::exception& e) {
    report(name, e.what());
    return exit_failure;
  }
}

int with_client(std::string_view name, const daemon_options& options, const session_body& body,
                daemon_start start) {
  return with_connection(
      name, options,
      [&body](client::connection& c) {
        rpc::initialize_params hello;
        hello.client_name = "handoff-cli";
        const rpc::initialize_result server = c.initialize(hello);
        return body(c, server);
      },
      start);
}

void report(std::string_view name, std::string_view what) {
  std::fprintf(stderr, "handoff %.*s: %.*s\n", static_cast<int>(name.size()), name.data(),
               static_cast<int>(what.size()), what.data());
}

bool print(std::string_view name, std::string_view bytes) {
  const std::size_t written = std::fwrite(bytes.data(), 1, bytes.size(), stdout);
  if (written != bytes.size() || std::fflush(stdout) != 0) {
    report(name, std::string("cannot write the output: ") + std::strerror(errno));
    return false;
  }
  return true;
}

bool print_json(std::string_view name, const nlohmann::json& value) {
  return print(name, value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

CLI::Option* add_usage_flags(CLI::App& sub, usage_flags& flags) {
  auto* window = sub.add_option("--context-window", flags.context_window,
                                "The parent model's context window, tokens (alone: tokens unknown, as after "
                                "a compaction)")
                     ->check(CLI::PositiveNumber);
  sub.add_option("--tokens", flags.tokens, "Tokens in the parent's context now (needs --context-window)")
      ->check(CLI::NonNegativeNumber)
      ->needs(window);
  return window;
}

std::optional<rpc::usage_dto> usage_from(const usage_flags& flags) {
  if (!flags.context_window) return std::nullopt;
  rpc::usage_dto usage;
  usage.context_window = *flags.context_window;
  usage.tokens = flags.tokens;
  if (flags.tokens)
    usage.percent = static_cast<double>(*flags.tokens) / static_cast<double>(*flags.context_window) * 100.0;
  return usage;
}

}  // namespace handoff::cli
