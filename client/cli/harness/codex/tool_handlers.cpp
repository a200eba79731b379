#include "cli/harness/codex/tool_handlers.hpp"

#include "cli/harness/codex/reporter.hpp"

namespace handoff::cli::codex {
namespace {

using nlohmann::json;

// `ID "TITLE"`, as the texts name a child.
std::string named(const started& s) { return s.child_id + " " + json(s.title).dump(); }

}  // namespace

std::optional<client::connection> connect_for_tool(const tool_context& ctx, std::string& why) {
  return connect_to_handoffd(ctx.daemon, std::nullopt, &why);
}

std::optional<std::string> spawn_tool(tool_context& ctx, const tool_call& call) {
  std::string model = string_arg(call.args, "model", false);
  if (model.empty()) model = call.model;
  const started s = ctx.children.spawn(call.parent, string_arg(call.args, "task", true),
                                       string_arg(call.args, "title", false), string_arg(call.args, "cwd", false), model);
  std::string text = s.queue_position == 0
                         ? "Started subagent " + named(s) + ". Call subagent_wait to get its result."
                         : "Queued subagent " + named(s) + ": the limit of running subagents is reached; it starts "
                               "when one finishes (position " + std::to_string(s.queue_position) + " in the queue).";
  if (!s.daemon_reachable)
    text += " handoffd is not reachable right now: the subagent runs anyway and its result is kept until it is back.";
  return text;
}

std::optional<std::string> send_tool(tool_context& ctx, const tool_call& call) {
  const started s =
      ctx.children.send(call.parent, string_arg(call.args, "id", true), string_arg(call.args, "message", true));
  const std::string answer = "Its answer comes as " + s.turn_id + "; call subagent_wait to get it.";
  const std::string text = s.behind ? "Queued for subagent " + named(s) + ": it is still working on turn " +
                                          std::to_string(s.turn - 1) + "; your message starts turn " +
                                          std::to_string(s.turn) + " when that ends. "
                           : s.queue_position > 0
                               ? "Queued turn " + std::to_string(s.turn) + " of subagent " + named(s) +
                                     ": the limit of running subagents is reached. "
                               : "Sent to subagent " + named(s) + ": turn " + std::to_string(s.turn) + " started. ";
  return text + answer;
}

std::optional<std::string> check_tool(tool_context& ctx, const tool_call& call) {
  const std::string id = string_arg(call.args, "id", true);
  const std::optional<turn_view> local = ctx.children.view(call.parent, id);
  const std::string head = "Subagent " + local->id + " " + json(local->title).dump() + ": ";
  if (local->phase == phase::waiting || local->phase == phase::queued || local->phase == phase::cancelled)
    return head + std::string(phase_name(local->phase)) +
           (local->preview.empty() ? "" : "\nLatest activity:\n" + local->preview);
  std::string state = local->phase == phase::running ? "running" : "finished (" + local->status + ")";
  std::string preview = local->preview;
  std::string why;
  if (std::optional<client::connection> conn = connect_for_tool(ctx, why)) {
    try {
      rpc::check_params p;
      p.parent_id = call.parent;
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

std::optional<std::string> cancel_tool(tool_context& ctx, const tool_call& call) {
  const std::string id = string_arg(call.args, "id", true);
  const children::cancelled c = ctx.children.cancel(call.parent, id);
  std::string why;
  if (std::optional<client::connection> conn = connect_for_tool(ctx, why)) {
    try {
      rpc::cancel_params p;
      p.parent_id = call.parent;
      p.child_ids = c.turn_ids;
      conn->cancel(p);
    } catch (const std::exception&) {
      // handoffd never knew them (it was down): nothing of theirs to drop there
    }
  }
  const std::string base = id.substr(0, id.find('.'));
  if (c.was == "cancelled") return "Subagent " + base + ": already cancelled.";
  return "Cancelled subagent " + base + ": " +
         (c.was == "running"                         ? "its process tree was ended."
          : c.was == "queued" || c.was == "waiting" ? "it had not started yet."
                                                    : "it had finished; a result not received yet was dropped.");
}

std::optional<std::string> list_tool(tool_context& ctx, const tool_call& call) {
  return ctx.children.list(call.parent);
}

}  // namespace handoff::cli::codex
