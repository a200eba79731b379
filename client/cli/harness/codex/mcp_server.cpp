// `handoff mcp`: the MCP server (stdio, newline-delimited JSON-RPC 2.0, protocol revision
// 2025-06-18 as Codex 0.169.0 speaks it) that gives Codex the subagent tools of the Pi package:
// subagent_spawn, subagent_send, subagent_wait, subagent_check, subagent_cancel, subagent_list.
// The parent is the Codex thread that calls (`_meta.threadId`); its children are `codex exec`
// processes (children.hpp); subagent_wait asks handoffd for one batch, projected for Codex's
// shell (reader "codex") and kept under the cut Codex applies to one MCP output (codex_env.hpp),
// with the parent's context use from its rollout.
//
// Each tools/call runs on its own thread, so a long wait blocks nothing; `notifications/cancelled`
// cancels a wait in flight (handoffd keeps what it had not answered yet). End of input (Codex
// closed the server) cancels the waits, stops every running child and reports it cancelled.
// A line over 16 MiB, a request that is not JSON-RPC, an unknown method or tool get a JSON-RPC
// error; bad tool arguments a tool result with isError and what to fix.
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/harness/codex/children.hpp"
#include "cli/harness/codex/codex_env.hpp"
#include "cli/harness/codex/entry.hpp"
#include "cli/harness/hook_input.hpp"
#include "engine/text/reader_profile.hpp"
#include "handoff/cancel_signal.hpp"
#include "protocol/default_paths.hpp"

namespace handoff::cli::codex {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr std::string_view mcp_protocol = "2025-06-18";
constexpr std::size_t max_line_bytes = 16 << 20;  // one message from Codex at most
constexpr std::size_t max_calls_in_flight = 64;
constexpr std::size_t notes_bytes = 1024;         // kept under Codex's cut for the notes after a batch

const char* const read_not_ask =
    "A long answer is cut to its first and last lines; its footer names the file with the full text and the "
    "exec_command calls that show the rest: run those instead of asking the subagent again.";

json tool(std::string name, std::string description, json properties, std::vector<std::string> required) {
  json schema = {{"type", "object"}, {"properties", std::move(properties)}, {"additionalProperties", false}};
  if (!required.empty()) schema["required"] = std::move(required);
  return {{"name", std::move(name)}, {"description", std::move(description)}, {"inputSchema", std::move(schema)}};
}

json tools_list() {
  const json id = {{"type", "string"}, {"description", "The subagent id (as subagent_spawn returned it)"}};
  return json::array({
      tool("subagent_spawn",
           std::string("Start a subagent: a separate Codex (`codex exec`, this session's configuration and model) that "
                       "works on `task` on its own and returns at once with its id. Get its final answer with "
                       "subagent_wait. ") +
               read_not_ask +
               " Prefer these subagent_* tools to spawn_agent / wait_agent: their answers come bounded, with the "
               "full text kept on disk. To give the same subagent more work later, use subagent_send.",
           {{"task", {{"type", "string"}, {"description", "The subagent's prompt: everything it needs to know"}}},
            {"title",
             {{"type", "string"}, {"description", "A short title shown with its result (default: the task's first line)"}}},
            {"cwd", {{"type", "string"}, {"description", "Working directory (default: this session's)"}}},
            {"model", {{"type", "string"}, {"description", "Model (default: this session's)"}}}},
           {"task"}),
      tool("subagent_wait",
           std::string("Wait until subagents finish and return their results (each cut to fit if long). Without `ids`, "
                       "waits for every subagent of this thread whose result you have not received yet; a subagent's "
                       "id waits for all its turns not received yet (`ID.N` for turn N only). ") +
               read_not_ask,
           {{"ids",
             {{"type", "array"},
              {"items", {{"type", "string"}}},
              {"description", "Subagent ids, or ID.N for turn N (default: all not yet received)"}}},
            {"timeoutMs",
             {{"type", "integer"},
              {"minimum", 0},
              {"maximum", 86'400'000},
              {"description", "Give up after this many ms (default: no limit)"}}}},
           {}),
      tool("subagent_check",
           "A subagent's state and a preview of its latest activity (at most 2 KiB / 20 lines); for a subagent given "
           "follow-ups, its latest turn (`ID.N`: turn N). Does not consume its result.",
           {{"id", id}}, {"id"}),
      tool("subagent_cancel",
           "Stop a subagent: ends its process and everything it started, drops its results not received yet, and "
           "closes its conversation (subagent_send to it is refused after).",
           {{"id", id}}, {"id"}),
      tool("subagent_send",
           "Give a subagent more work: `message` becomes the next prompt of its own Codex conversation, which goes on "
           "with everything it read and said so far, so it need not start over. Its answer is a new result `ID.N` "
           "(turn N), returned by subagent_wait like any other. A subagent still working gets the message when its "
           "current turn ends. Only for new work: to see more of an answer that was cut, run the calls its footer "
           "names instead of asking again.",
           {{"id", id}, {"message", {{"type", "string"}, {"description", "The next prompt for that subagent"}}}},
           {"id", "message"}),
      tool("subagent_list",
           "Every subagent of this thread, one line each: id, title, state (queued, running, completed: finished but "
           "not received yet, delivered, cancelled) and its current turn. At most 2 KiB.",
           json::object(), {}),
  });
}

// A tool's argument error: the model reads it and calls again.
struct bad_arguments : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

std::string string_arg(const json& args, const char* key, bool required) {
  const auto it = args.find(key);
  if (it == args.end() || it->is_null()) {
    if (required) throw bad_arguments(std::string("`") + key + "` is required");
    return {};
  }
  if (!it->is_string()) throw bad_arguments(std::string("`") + key + "` must be a string");
  return it->get<std::string>();
}

class server {
 public:
  server(codex_children_options options, fs::path home, std::size_t output_bytes)
      : home_(std::move(home)), output_bytes_(output_bytes), daemon_(options.daemon), children_(std::move(options)) {}

  int run() {
    std::string line;
    while (read_line(line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      json message = json::parse(line, nullptr, false);
      if (message.is_discarded()) {
        send_error(nullptr, -32700, "not JSON");
        continue;
      }
      handle(std::move(message));
    }
    // Codex closed the server: the waits are given up first (handoffd keeps what they had not
    // taken), and only once they have ended are the running children stopped and reported
    // cancelled: a child cancelled under a wait still asleep would settle it, and handoffd would
    // answer it with the finished results, consumed, to nobody.
    std::unique_lock<std::mutex> held(calls_mutex_);
    for (auto& [id, signal] : cancels_) signal->raise();
    const bool ended = calls_done_.wait_for(held, std::chrono::seconds(10), [this] { return in_flight_ == 0; });
    held.unlock();
    children_.shutdown();
    return ended ? 0 : 1;
  }

 private:
  // The next line of stdin, without its "\n"; false at its end. A line over max_line_bytes is
  // answered with an error and skipped.
  bool read_line(std::string& line) {
    line.clear();
    for (;;) {
      const int c = std::getchar();
      if (c == EOF) return !line.empty();
      if (c == '\n') return true;
      if (line.size() == max_line_bytes) {
        for (int d = c; d != '\n' && d != EOF; d = std::getchar()) {
        }
        send_error(nullptr, -32600, "a message over 16 MiB was skipped");
        line.clear();
        continue;
      }
      line.push_back(static_cast<char>(c));
    }
  }

  void write(const json& message) {
    const std::string text = message.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    const std::lock_guard<std::mutex> hold(out_mutex_);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }

  void send_result(const json& id, json result) { write({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}}); }

  void send_error(const json& id, int code, const std::string& message) {
    write({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
  }

  void handle(json message) {
    if (!message.is_object() || message.value("jsonrpc", "") != "2.0" || !message.contains("method") ||
        !message["method"].is_string()) {
      if (message.is_object() && (message.contains("result") || message.contains("error"))) return;  // a response
      send_error(message.is_object() && message.contains("id") ? message["id"] : json(nullptr), -32600,
                 "not a JSON-RPC 2.0 request");
      return;
    }
    const std::string method = message["method"];
    const bool request = message.contains("id");
    const json id = request ? message["id"] : json(nullptr);
    const json params = message.value("params", json::object());
    if (method == "notifications/cancelled") {
      const json& which = params.is_object() ? params.value("requestId", json(nullptr)) : json(nullptr);
      const std::lock_guard<std::mutex> hold(calls_mutex_);
      if (const auto it = cancels_.find(which.dump()); it != cancels_.end()) it->second->raise();
      return;
    }
    if (!request) return;  // notifications/initialized and the rest: nothing to do
    if (method == "initialize") {
      const std::string asked = params.is_object() ? params.value("protocolVersion", "") : "";
      send_result(id, {{"protocolVersion", asked.empty() ? std::string(mcp_protocol) : asked},
                       {"capabilities", {{"tools", {{"listChanged", false}}}}},
                       {"serverInfo", {{"name", "handoff"}, {"version", HANDOFF_VERSION}}},
                       {"instructions",
                        "handoff's subagent tools run subagents as separate Codex processes and return their answers "
                        "bounded: head, tail and a footer whose exec_command calls show the rest of the full text, "
                        "kept on disk. Prefer them to spawn_agent / wait_agent for delegated work."}});
      return;
    }
    if (method == "ping") {
      send_result(id, json::object());
      return;
    }
    if (method == "tools/list") {
      send_result(id, {{"tools", tools_list()}});
      return;
    }
    if (method != "tools/call") {
      send_error(id, -32601, "handoff mcp has no method " + method);
      return;
    }
    if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
      send_error(id, -32602, "tools/call needs params.name");
      return;
    }
    auto signal = std::make_shared<client::cancel_signal>();
    {
      const std::lock_guard<std::mutex> hold(calls_mutex_);
      if (in_flight_ >= max_calls_in_flight) {
        send_error(id, -32603, "too many tool calls in flight (64)");
        return;
      }
      ++in_flight_;
      cancels_[id.dump()] = signal;
    }
    std::thread([this, id, params, signal] {
      call(id, params, *signal);
      const std::lock_guard<std::mutex> hold(calls_mutex_);
      cancels_.erase(id.dump());
      --in_flight_;
      calls_done_.notify_all();
    }).detach();
  }

  void call(const json& id, const json& params, const client::cancel_signal& cancel) {
    const std::string name = params["name"];
    const json args = params.value("arguments", json::object());
    const json meta = params.value("_meta", json::object());
    const json turn = meta.is_object() ? meta.value("x-codex-turn-metadata", json::object()) : json::object();
    std::string parent = meta.is_object() ? meta.value("threadId", "") : "";
    if (parent.empty() && turn.is_object()) parent = turn.value("thread_id", "");
    const std::string model = turn.is_object() ? turn.value("model", "") : "";
    static const std::vector<std::string> known = {"subagent_spawn", "subagent_wait",   "subagent_check",
                                                   "subagent_cancel", "subagent_send", "subagent_list"};
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      send_error(id, -32602, "handoff mcp has no tool " + name);
      return;
    }
    try {
      if (!args.is_object()) throw bad_arguments("arguments must be an object");
      if (parent.empty()) throw bad_arguments("the call carries no _meta.threadId: handoff mcp serves Codex threads");
      std::string text;
      if (name == "subagent_spawn") text = spawn(parent, args, model);
      if (name == "subagent_send") text = send(parent, args);
      if (name == "subagent_wait") text = wait(parent, args, cancel);
      if (name == "subagent_check") text = check(parent, args);
      if (name == "subagent_cancel") text = cancel_child(parent, args);
      if (name == "subagent_list") text = children_.list(parent);
      if (cancel.raised() && name == "subagent_wait" && text.empty()) return;  // cancelled: no reply is sent
      send_result(id, {{"content", json::array({{{"type", "text"}, {"text", text}}})}, {"isError", false}});
    } catch (const std::exception& e) {
      send_result(id, {{"content", json::array({{{"type", "text"}, {"text", name + ": " + e.what()}}})},
                       {"isError", true}});
    }
  }

  std::optional<client::connection> connect(std::string& why) const {
    try {
      client::options settings;
      settings.socket = daemon_.socket;
      settings.start = client::autostart_from_environment();
      return client::connection(settings);
    } catch (const std::exception& e) {
      why = e.what();
      return std::nullopt;
    }
  }

  std::string spawn(const std::string& parent, const json& args, const std::string& parent_model) {
    std::string model = string_arg(args, "model", false);
    if (model.empty()) model = parent_model;
    const codex_started s = children_.spawn(parent, string_arg(args, "task", true), string_arg(args, "title", false),
                                            string_arg(args, "cwd", false), model);
    const std::string name = s.child_id + " " + json(s.title).dump();
    std::string text = s.queue_position == 0
                           ? "Started subagent " + name + ". Call subagent_wait to get its result."
                           : "Queued subagent " + name + ": the limit of running subagents is reached; it starts when "
                                 "one finishes (position " + std::to_string(s.queue_position) + " in the queue).";
    if (!s.daemon_reachable)
      text += " handoffd is not reachable right now: the subagent runs anyway and its result is kept until it is back.";
    return text;
  }

  std::string send(const std::string& parent, const json& args) {
    const codex_started s = children_.send(parent, string_arg(args, "id", true), string_arg(args, "message", true));
    const std::string name = s.child_id + " " + json(s.title).dump();
    const std::string answer = "Its answer comes as " + s.turn_id + "; call subagent_wait to get it.";
    std::string text = s.behind ? "Queued for subagent " + name + ": it is still working on turn " +
                                      std::to_string(s.turn - 1) + "; your message starts turn " +
                                      std::to_string(s.turn) + " when that ends. "
                       : s.queue_position > 0
                           ? "Queued turn " + std::to_string(s.turn) + " of subagent " + name +
                                 ": the limit of running subagents is reached. "
                           : "Sent to subagent " + name + ": turn " + std::to_string(s.turn) + " started. ";
    return text + answer;
  }

  std::string wait(const std::string& parent, const json& args, const client::cancel_signal& cancel) {
    std::vector<std::string> asked;
    if (const auto it = args.find("ids"); it != args.end() && !it->is_null()) {
      if (!it->is_array()) throw bad_arguments("`ids` must be an array of strings");
      for (const json& one : *it) {
        if (!one.is_string()) throw bad_arguments("`ids` must be an array of strings");
        asked.push_back(one.get<std::string>());
      }
    }
    std::optional<std::int64_t> timeout;
    if (const auto it = args.find("timeoutMs"); it != args.end() && !it->is_null()) {
      if (!it->is_number_integer() || it->get<std::int64_t>() < 0 || it->get<std::int64_t>() > 86'400'000)
        throw bad_arguments("`timeoutMs` must be an integer from 0 to 86400000");
      timeout = it->get<std::int64_t>();
    }
    std::vector<std::string> ids = children_.wait_ids(parent, asked);
    if (ids.empty()) return "No subagent of this thread has a result you have not received.";
    std::vector<std::string> left;
    if (ids.size() > 64) {
      left.assign(ids.begin() + 64, ids.end());
      ids.resize(64);
    }
    rpc::wait_params p;
    p.parent_id = parent;
    p.child_ids = ids;
    p.timeout_ms = timeout;
    p.usage = codex_thread_usage(home_, parent);
    p.reader = std::string(codex_reader.name);
    const std::size_t cut = codex_output_bytes(home_, output_bytes_);
    p.max_bytes = static_cast<std::int64_t>(
        std::max<std::size_t>(cut > notes_bytes ? cut - notes_bytes : 0, static_cast<std::size_t>(rpc::min_wait_max_bytes)));
    // handoffd lost mid-wait (killed, restarted) took nothing: wait again on the one that
    // answers next (started when none does), a few times.
    rpc::wait_result r;
    for (int attempt = 1;; ++attempt) {
      std::string why;
      std::optional<client::connection> conn = connect(why);
      try {
        if (!conn) throw client::client_error(client::error_kind::daemon_absent, why);
        children_.announce(parent, *conn);
        r = conn->wait(p, cancel);
        break;
      } catch (const client::client_error& e) {
        if (e.kind() == client::error_kind::rpc && e.code() == rpc::errc::request_cancelled) return {};
        const bool lost = e.kind() == client::error_kind::daemon_absent || e.kind() == client::error_kind::refused ||
                          e.kind() == client::error_kind::io ||
                          (e.kind() == client::error_kind::rpc && e.code() == rpc::errc::shutting_down);
        if (!lost || attempt == 5 || cancel.raised())
          throw std::runtime_error(std::string(e.what()) +
                                   ". Nothing is lost: the subagents' results are kept; call subagent_wait again.");
        std::this_thread::sleep_for(std::chrono::milliseconds(200 * attempt));
      }
    }
    std::vector<std::string> received;
    for (const rpc::section_dto& s : r.batch.sections) received.push_back(s.child_id);
    for (const auto* list : {&r.already_delivered, &r.cancelled, &r.forgotten})
      received.insert(received.end(), list->begin(), list->end());
    children_.mark_received(parent, received);
    std::vector<std::string> notes;
    const auto joined = [](const std::vector<std::string>& v) {
      std::string out;
      for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
      return out;
    };
    if (!r.pending.empty()) notes.push_back("Still running: " + joined(r.pending) + ". Call subagent_wait again for them.");
    if (r.batch.deferred > 0)
      notes.push_back(std::to_string(r.batch.deferred) +
                      (r.batch.deferred == 1 ? " finished result did not" : " finished results did not") +
                      " fit in this answer; call subagent_wait again for the rest.");
    if (!r.already_delivered.empty()) notes.push_back("Already received earlier: " + joined(r.already_delivered) + ".");
    if (!r.cancelled.empty()) notes.push_back("Cancelled: " + joined(r.cancelled) + ".");
    if (!left.empty()) notes.push_back("Not waited for (at most 64 per call): " + joined(left) + ".");
    std::string text = r.batch.text;
    for (std::string& note : notes) {
      if (note.size() > notes_bytes / 2) note = note.substr(0, notes_bytes / 2 - 4) + " ...";
      text += (text.empty() ? "" : "\n\n") + note;
    }
    return text.empty() ? std::string("No results.") : text;
  }

  std::string check(const std::string& parent, const json& args) {
    const std::string id = string_arg(args, "id", true);
    const std::optional<codex_turn_view> local = children_.view(parent, id);
    std::string head = "Subagent " + local->id + " " + json(local->title).dump() + ": ";
    if (local->phase == "waiting" || local->phase == "queued" || local->phase == "cancelled")
      return head + local->phase + (local->preview.empty() ? "" : "\nLatest activity:\n" + local->preview);
    std::string why;
    std::optional<client::connection> conn = connect(why);
    std::string state = local->phase == "running" ? "running" : "finished (" + local->status + ")";
    std::string preview = local->preview;
    if (conn) {
      try {
        rpc::check_params p;
        p.parent_id = parent;
        p.child_id = local->id;
        const rpc::check_result r = conn->check(p);
        state = r.state;
        if (!r.status.empty()) state += " (" + r.status + ")";
        if (r.bytes && r.lines) state += ", " + std::to_string(*r.bytes) + " bytes / " + std::to_string(*r.lines) + " lines";
        if (!r.error.empty()) state += "\nError: " + r.error;
        if (!r.preview.empty()) preview = r.preview;
      } catch (const std::exception&) {
        // the local view is all there is
      }
    }
    return head + state + (preview.empty() ? "" : "\nLatest activity:\n" + preview);
  }

  std::string cancel_child(const std::string& parent, const json& args) {
    const std::string id = string_arg(args, "id", true);
    const codex_children::cancelled c = children_.cancel(parent, id);
    std::string why;
    if (std::optional<client::connection> conn = connect(why)) {
      try {
        rpc::cancel_params p;
        p.parent_id = parent;
        p.child_ids = c.turn_ids;
        conn->cancel(p);
      } catch (const std::exception&) {
        // handoffd never knew them (it was down): nothing of theirs to drop there
      }
    }
    const std::string base = id.substr(0, id.find('.'));
    if (c.was == "cancelled") return "Subagent " + base + ": already cancelled.";
    return "Cancelled subagent " + base + ": " +
           (c.was == "running" ? "its process tree was ended."
            : c.was == "queued" || c.was == "waiting" ? "it had not started yet."
                                                      : "it had finished; a result not received yet was dropped.");
  }

  fs::path home_;
  std::size_t output_bytes_;  // $HANDOFF_CODEX_OUTPUT_BYTES, 0 when unset
  daemon_options daemon_;
  codex_children children_;
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
    codex_children_options options;
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
