// `handoff status [--json]`
//
// Prints daemon/status: the daemon's version and uptime, connections, parents, children by
// state, the durable queue and the artifact store. --json prints daemon/status's result as the
// daemon sent it (docs/protocol.md lists its fields).
#include "cli/status_command.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <string>

namespace handoff::cli {
namespace {

struct status_options {
  bool json = false;
};

// A member of the free-form status object, or `fallback` when this daemon does not report it.
template <class T>
T field(const nlohmann::json& status, const char* pointer, T fallback) {
  try {
    return status.value(nlohmann::json::json_pointer(pointer), fallback);
  } catch (const nlohmann::json::exception&) {
    return fallback;
  }
}

std::string format_duration(std::int64_t ms) {
  const std::int64_t s = ms / 1000;
  char buf[64];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(s));
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  else
    std::snprintf(buf, sizeof buf, "%lldh%02lldm%02llds", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  return buf;
}

std::string format_bytes(std::uint64_t bytes) {
  char buf[64];
  if (bytes < 1024)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else if (bytes < 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024);
  else
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024 * 1024));
  return buf;
}

std::string render(const nlohmann::json& s, const std::string& socket) {
  auto count = [&s](const char* pointer) { return std::to_string(field<std::uint64_t>(s, pointer, 0)); };
  std::string out;
  out += "handoffd " + field<std::string>(s, "/version", "?") + " at " + socket + ", up " +
         format_duration(field<std::int64_t>(s, "/uptimeMs", 0)) + "\n";
  out += "connections  " + count("/connections") + "\n";
  out += "parents      " + count("/parents") + "\n";
  out += "children     " + count("/children/running") + " running, " + count("/children/completed") +
         " completed, " + count("/children/delivering") + " being delivered, " + count("/children/delivered") +
         " delivered\n";
  out += "waits        " + count("/waits") + " asleep\n";
  out += "queue        " + count("/queue/results") + " results (" +
         format_bytes(field<std::uint64_t>(s, "/queue/textBytes", 0)) + " of text), " +
         count("/queue/deliveries") + " deliveries awaiting acknowledgement\n";
  out += "             " + field<std::string>(s, "/queue/dir", "?") + "\n";
  out += "artifacts    " + field<std::string>(s, "/store/dir", "?") + "\n";
  return out;
}

int run_status(const daemon_options& daemon, const status_options& options) {
  return with_client("status", daemon, [&](client::connection& c, const rpc::initialize_result&) {
    // Untyped, as the daemon sent it: --json prints it so, and render() shows what an older or
    // newer daemon reports (client::connection::daemon_status() wants today's fields).
    const nlohmann::json status = c.call(rpc::methods::daemon_status.name, nullptr);
    if (!status.is_object()) throw client::client_error(client::error_kind::protocol, "handoffd's daemon/status is not an object");
    const bool ok = options.json ? print_json("status", status) : print("status", render(status, c.socket_path()));
    return ok ? exit_ok : exit_failure;
  }, daemon_start::never);  // it reports whether one runs; starting one would hide that
}

}  // namespace

command add_status_command(CLI::App& app, std::shared_ptr<const daemon_options> daemon) {
  auto options = std::make_shared<status_options>();
  CLI::App* sub = add_daemon_subcommand(app, "status", "Show what handoffd holds: children, queue, store");
  sub->add_flag("--json", options->json, "Print daemon/status's result as JSON");
  return command{sub, [daemon, options] { return run_status(*daemon, *options); }};
}

}  // namespace handoff::cli
