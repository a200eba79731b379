// What the subcommands that talk to handoffd share: the global --socket option, a connected and
// initialized client, client errors turned into a message and an exit status, output, and the
// usage flags of `wait` and `watch`.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "handoff/connection.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace handoff::cli {

// Exit statuses of the daemon subcommands, beyond command.hpp's 0, 1 (here also: the daemon
// refused, timed out or answered with an error) and 2.
inline constexpr int exit_daemon_absent = 3;  // no handoffd listens at the socket
inline constexpr int exit_wait_timeout = 4;   // `wait --timeout-ms` passed with children pending

struct daemon_options {
  std::string socket;  // --socket PATH; empty: client::default_socket_path()
};

// Adds --socket to the top-level app, and the exit statuses to its --help footer.
std::shared_ptr<const daemon_options> add_daemon_options(CLI::App& app);

// A subcommand that also takes the top-level options after its own (`handoff status --socket S`).
CLI::App* add_daemon_subcommand(CLI::App& app, const std::string& name, const std::string& description);

// Whether a command starts handoffd when none answers (client/lib/handoff/daemon_start.hpp;
// HANDOFF_AUTOSTART=0 turns it off): every command that needs one, not those that look at
// whether one runs (status, doctor).
enum class daemon_start { if_absent, never };

// Connects and runs `body`, which returns the exit status. A failure, here or in `body`, is
// printed to stderr as "handoff <name>: <why>" and becomes the exit status: 3 when no daemon
// runs at the socket (and none could be started), 1 otherwise.
int with_connection(std::string_view name, const daemon_options& options,
                    const std::function<int(client::connection&)>& body,
                    daemon_start start = daemon_start::if_absent);

// The same, after initializing as a plain client; `body` also gets the daemon's answer to
// initialize, for commands that check a limit before sending.
using session_body = std::function<int(client::connection&, const rpc::initialize_result&)>;
int with_client(std::string_view name, const daemon_options& options, const session_body& body,
                daemon_start start = daemon_start::if_absent);

// Prints to stderr: "handoff <name>: <what>" (errors, and notes that are not output).
void report(std::string_view name, std::string_view what);

// Writes bytes to stdout as they are and flushes; false (after complaining) when that failed.
bool print(std::string_view name, std::string_view bytes);
// Writes `value` as indented JSON and a newline; invalid UTF-8 in strings prints as U+FFFD.
bool print_json(std::string_view name, const nlohmann::json& value);
// What a command prints of its call's result: rpc::encode(result) as JSON for --json, else the
// text `render()` makes. exit_ok, or exit_failure when stdout failed.
template <class Result, class Render>
int print_result(std::string_view name, bool as_json, const Result& result, const Render& render) {
  const bool ok = as_json ? print_json(name, rpc::encode(result)) : print(name, render());
  return ok ? exit_ok : exit_failure;
}

// --tokens / --context-window: the parent's context usage, as Pi's ctx.getContextUsage() gives it.
struct usage_flags {
  std::optional<std::int64_t> tokens;          // --tokens: tokens in context, >= 0
  std::optional<std::int64_t> context_window;  // --context-window: the model's window, tokens, > 0
};
// Adds both options (--tokens needs --context-window); returns --context-window's.
CLI::Option* add_usage_flags(CLI::App& sub, usage_flags& flags);
// {tokens, contextWindow, percent}; tokens (and percent) null when only the window was given,
// as Pi reports right after a compaction. nullopt when no window was given.
std::optional<rpc::usage_dto> usage_from(const usage_flags& flags);

}  // namespace handoff::cli
