// `handoff mcp`: the MCP server (stdio, protocol revision 2025-06-18 as Codex 0.169.0 speaks it)
// that gives Codex the subagent tools of the Pi package (mcp_tools.hpp). The parent is the Codex
// thread that calls (`_meta.threadId`); its children are `codex exec` processes (children.hpp).
//
// The wire is the protocol layer's: frames from protocol/framing.hpp (newline-delimited JSON, as
// Codex writes; Content-Length headers if a client starts with them), messages classified by
// rpc::parse_message, replies written by rpc::make_response / make_error with rpc::errc codes.
// Each tools/call runs on its own thread, so a long wait blocks nothing; `notifications/cancelled`
// cancels a wait in flight (handoffd keeps what it had not answered yet). End of input (Codex
// closed the server) cancels the waits, stops every running child and reports it cancelled.
// A frame over 16 MiB, a message that is not JSON-RPC, an unknown method or tool get a JSON-RPC
// error; bad tool arguments a tool result with isError and what to fix.
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/harness/codex/children.hpp"
#include "cli/harness/codex/codex_env.hpp"
#include "cli/harness/codex/entry.hpp"
#include "cli/harness/codex/mcp_tools.hpp"
#include "cli/harness/hook_input.hpp"
#include "protocol/framing.hpp"
#include "protocol/jsonrpc.hpp"

namespace handoff::cli::codex {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using rpc::errc;

constexpr std::string_view mcp_protocol = "2025-06-18";
constexpr std::size_t max_frame_bytes = 16 << 20;  // one message from Codex at most
constexpr std::size_t max_calls_in_flight = 64;
constexpr auto shutdown_grace = std::chrono::seconds(10);  // for the waits to give up at the end

class server {
 public:
  server(codex::children_options options, fs::path home, std::size_t output_bytes)
      : children_(options), tools_{children_, std::move(home), output_bytes, options.daemon} {}

  int run() {
    rpc::frame_decoder frames(max_frame_bytes);
    const auto drain = [&] {
      mode_ = frames.mode();
      while (std::optional<rpc::decoded_frame> f = frames.next()) {
        if (f->oversized)
          send(rpc::make_error(nullptr, errc::invalid_request, "a message over 16 MiB was skipped"));
        else
          on_frame(f->payload);
      }
    };
    try {
      char buf[65536];
      for (ssize_t n; (n = ::read(0, buf, sizeof buf)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        frames.feed(std::string_view(buf, static_cast<std::size_t>(n)));
        drain();
      }
      // A last line without its newline is a message too.
      if (frames.mode() == rpc::framing::ndjson && frames.in_frame()) {
        frames.feed("\n");
        drain();
      }
    } catch (const std::runtime_error&) {
      // A malformed Content-Length header: the stream cannot be followed any further.
    }
    // Codex closed the server: the waits are given up first (handoffd keeps what they had not
    // taken), and only once they have ended are the running children stopped and reported
    // cancelled: a child cancelled under a wait still asleep would settle it, and handoffd would
    // answer it with the finished results, consumed, to nobody.
    std::unique_lock<std::mutex> held(calls_mutex_);
    for (auto& [id, signal] : cancels_) signal->raise();
    const bool ended = calls_done_.wait_for(held, shutdown_grace, [this] { return in_flight_ == 0; });
    held.unlock();
    children_.shutdown();
    return ended ? 0 : 1;
  }

 private:
  void send(const std::string& payload) {
    const std::string frame = rpc::encode_frame(payload, mode_.load());
    const std::lock_guard<std::mutex> hold(out_mutex_);
    std::fwrite(frame.data(), 1, frame.size(), stdout);
    std::fflush(stdout);
  }

  void on_frame(std::string_view frame) {
    rpc::message m;
    try {
      m = rpc::parse_message(frame);
    } catch (const rpc::rpc_error& e) {
      if (e.code == errc::parse_error) return send(rpc::make_error(nullptr, errc::parse_error, "not JSON"));
      const json id = e.data.is_object() ? e.data.value("id", json(nullptr)) : json(nullptr);
      return send(rpc::make_error(id, errc::invalid_request, "not a JSON-RPC 2.0 request"));
    }
    if (m.type == rpc::message::kind::response) return;  // we send no requests
    if (m.type == rpc::message::kind::notification) {
      if (m.method == "notifications/cancelled") cancel(m.params);
      return;  // notifications/initialized and the rest: nothing to do
    }
    try {
      dispatch(m);
    } catch (const std::exception& e) {
      // A field of an unexpected type, a bug: answered, and the server goes on.
      send(rpc::make_error(m.id, errc::internal_error, e.what()));
    }
  }

  // The methods, each answered once (tools/call from its own thread).
  void dispatch(rpc::message& m) {
    if (m.method == "initialize") return send(rpc::make_response(m.id, initialize(m.params)));
    if (m.method == "ping") return send(rpc::make_response(m.id, json::object()));
    if (m.method == "tools/list") return send(rpc::make_response(m.id, {{"tools", codex::tools_list()}}));
    if (m.method == "tools/call") return call(m.id, std::move(m.params));
    send(rpc::make_error(m.id, errc::method_not_found, "handoff mcp has no method " + m.method));
  }

  static json initialize(const json& params) {
    const std::string asked = params.is_object() ? params.value("protocolVersion", "") : "";
    return {{"protocolVersion", asked.empty() ? std::string(mcp_protocol) : asked},
            {"capabilities", {{"tools", {{"listChanged", false}}}}},
            {"serverInfo", {{"name", "handoff"}, {"version", HANDOFF_VERSION}}},
            {"instructions", std::string(instructions)}};
  }

  // What a catalog model sees of the server before it loads its tools: "Deferred tool namespaces:
  // - mcp__handoff: " and these instructions cut at 250 characters (Codex 0.169.0 and 0.171.0,
  // measured), so the point is made within them.
  static constexpr std::string_view instructions =
      "handoff's subagent tools: subagent_spawn starts a Codex subagent, subagent_wait returns its answer bounded "
      "(head, verdict, and exec_command pages for the rest, kept on disk). Delegate with them, not spawn_agent / "
      "wait_agent.";
  static_assert(instructions.size() <= 250);

  void cancel(const json& params) {
    const json which = params.is_object() ? params.value("requestId", json(nullptr)) : json(nullptr);
    const std::lock_guard<std::mutex> hold(calls_mutex_);
    if (const auto it = cancels_.find(which.dump()); it != cancels_.end()) it->second->raise();
  }

  // tools/call: checked here, run on a thread of its own.
  void call(const json& id, json params) {
    if (!params.is_object() || !params.contains("name") || !params["name"].is_string())
      return send(rpc::make_error(id, errc::invalid_params, "tools/call needs params.name"));
    const std::string name = params["name"];
    const codex::tool* tool = codex::find_tool(name);
    if (tool == nullptr) return send(rpc::make_error(id, errc::invalid_params, "handoff mcp has no tool " + name));
    auto signal = std::make_shared<client::cancel_signal>();
    {
      const std::lock_guard<std::mutex> hold(calls_mutex_);
      if (in_flight_ >= max_calls_in_flight)
        return send(rpc::make_error(id, errc::internal_error, "too many tool calls in flight (64)"));
      ++in_flight_;
      cancels_[id.dump()] = signal;
    }
    const auto done = [this, key = id.dump()] {
      const std::lock_guard<std::mutex> hold(calls_mutex_);
      cancels_.erase(key);
      --in_flight_;
      calls_done_.notify_all();
    };
    try {
      std::thread([this, id, params = std::move(params), tool, signal, done] {
        run_tool(id, params, *tool, *signal);
        done();
      }).detach();
    } catch (...) {
      done();  // no thread: the call is answered -32603 by on_frame and counts no more
      throw;
    }
  }

  void run_tool(const json& id, const json& params, const codex::tool& tool, const client::cancel_signal& cancel) {
    const auto result = [&](const std::string& text, bool error) {
      send(rpc::make_response(id, {{"content", json::array({{{"type", "text"}, {"text", text}}})}, {"isError", error}}));
    };
    try {
      const json args = params.value("arguments", json::object());
      const json meta = params.value("_meta", json::object());
      const json turn = meta.is_object() ? meta.value("x-codex-turn-metadata", json::object()) : json::object();
      std::string parent = meta.is_object() ? meta.value("threadId", "") : "";
      if (parent.empty() && turn.is_object()) parent = turn.value("thread_id", "");
      const std::string model = turn.is_object() ? turn.value("model", "") : "";
      if (!args.is_object()) throw codex::bad_arguments("arguments must be an object");
      if (parent.empty()) throw codex::bad_arguments("the call carries no _meta.threadId: handoff mcp serves Codex threads");
      const std::optional<std::string> text = tool.handler(tools_, codex::tool_call{parent, model, args, cancel});
      if (text) result(*text, false);  // else cancelled: no reply is sent
    } catch (const std::exception& e) {
      result(std::string(tool.name) + ": " + e.what(), true);
    }
  }

  codex::children children_;
  codex::tool_context tools_;
  std::atomic<rpc::framing> mode_{rpc::framing::ndjson};  // as Codex's first bytes decided
  std::mutex out_mutex_;
  std::mutex calls_mutex_;
  std::condition_variable calls_done_;
  std::size_t in_flight_ = 0;
  std::map<std::string, std::shared_ptr<client::cancel_signal>> cancels_;  // by the request id's JSON
};

}  // namespace

command add_server(CLI::App& app, std::shared_ptr<const daemon_options> daemon) {
  CLI::App* sub = app.add_subcommand(
      "mcp",
      "Codex: the MCP server Codex starts (handoff setup codex): subagent tools whose children are codex exec "
      "processes, their answers bounded through handoffd");
  return command{sub, [daemon] {
    codex::children_options options;
    options.daemon = *daemon;
    options.codex = codex_binary();
    const char* state = std::getenv("XDG_STATE_HOME");
    const char* home = std::getenv("HOME");
    options.state_dir = (state != nullptr && *state == '/' ? fs::path(state)
                                                          : fs::path(home != nullptr ? home : "/") / ".local/state") /
                        "handoff" / "codex";
    std::size_t output_bytes = 0;
    try {
      options.max_running = bounded_env("HANDOFF_CODEX_MAX_RUNNING", 4, 1, 32);
      options.turn_timeout = std::chrono::seconds(bounded_env("HANDOFF_CODEX_TURN_TIMEOUT_S", 3600, 1, 7 * 86400));
      output_bytes = bounded_env("HANDOFF_CODEX_OUTPUT_BYTES", 0, 1024, 64 * 1024 * 1024);
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "handoff mcp: %s\n", e.what());
      return exit_usage;
    }
    auto s = std::make_unique<server>(std::move(options), codex_home(), output_bytes);
    const int status = s->run();
    // A tool call still running after its grace holds the server: leave without destroying it.
    if (status != 0) std::_Exit(status);
    return status;
  }};
}

}  // namespace handoff::cli::codex
