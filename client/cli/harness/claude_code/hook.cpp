#include "cli/harness/claude_code/hook.hpp"

#include <cstdlib>
#include <exception>
#include <thread>
#include <vector>

#include "cli/harness/claude_code/background.hpp"
#include "cli/harness/claude_code/transcript.hpp"
#include "engine/text/batch.hpp"
#include "engine/text/projection.hpp"
#include "engine/text/reader_profile.hpp"
#include "engine/text/projection_notice.hpp"
#include "handoff/client.hpp"
#include "protocol/default_paths.hpp"

namespace handoff::cli {
namespace {

using nlohmann::json;

json post_tool_use_answer(const json& response) {
  return json{{"hookSpecificOutput", {{"hookEventName", "PostToolUse"}, {"updatedToolOutput", response}}}};
}

// The original output and one line saying it was not bounded: nothing of the answer is lost.
std::string not_bounded(const json& response, const std::string& why) {
  json out = response;
  out["content"].push_back(json{{"type", "text"}, {"text", "[handoff: this result was not bounded (" + why + ")]"}});
  return post_tool_use_answer(out).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string with_content(const json& response, const std::string& text) {
  json out = response;
  out["content"] = json::array({json{{"type", "text"}, {"text", text}}});
  return post_tool_use_answer(out).dump(-1, ' ', false, json::error_handler_t::replace);
}


// A background agent launched, or an agent failed: it will not complete here, so a sibling's
// wait must not wait for it.
void cancel_child(const json& hook, const hook_settings& settings) {
  const std::string parent = hook.value("session_id", "");
  const std::string child = hook.value("tool_use_id", "");
  if (parent.empty() || child.empty()) return;
  try {
    client::connection c = connect(settings, false);  // no daemon: no sibling waits for it
    c.started({parent, child, ""});
    c.cancel({parent, {child}});
  } catch (const std::exception&) {
    // Nothing waits on a child handoffd never heard of.
  }
}

std::string bound_agent_answer(const json& hook, const json& response, const hook_settings& settings) {
  const std::string parent = hook.value("session_id", "");
  const std::string child = hook.value("tool_use_id", "");
  const std::string text = agent_answer_text(response["content"]);
  if (parent.empty() || child.empty()) return {};

  // Claude Code writes its transcript behind the tools it runs: on a busy machine the turn's
  // assistant message was seen to land after the agents' hooks started. Read again until it is
  // there, for a bounded time; then go on without it (no siblings, no usage: static caps).
  const std::string transcript = hook.value("transcript_path", "");
  transcript_turn turn = read_transcript_turn(transcript, child);
  const auto give_up = std::chrono::steady_clock::now() + settings.transcript_wait;
  while (turn.agents.empty() && !transcript.empty() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    turn = read_transcript_turn(transcript, child);
  }
  std::vector<agent_call> siblings;
  for (const agent_call& call : turn.agents)
    if (call.tool_use_id != child && !call.background) siblings.push_back(call);
  if (siblings.empty() && fits_unchanged(text)) return {};  // short and alone: as it is

  std::string title;
  if (hook.contains("tool_input") && hook["tool_input"].is_object())
    title = hook["tool_input"].value("description", "");
  try {
    client::connection c = connect(settings, true);
    for (const agent_call& s : siblings) c.started({parent, s.tool_use_id, s.description});
    rpc::completed_params done;
    done.parent_id = parent;
    done.child_id = child;
    done.title = title;
    done.status = "done";
    done.final_text = text;
    c.completed(done);

    rpc::wait_params wait;
    wait.parent_id = parent;
    wait.child_ids = {child};
    wait.reader = std::string(claude_code_reader.name);
    wait.usage = usage_of(turn, settings);
    if (!siblings.empty()) {
      wait.batch_with.push_back(child);
      for (const agent_call& s : siblings) wait.batch_with.push_back(s.tool_use_id);
      wait.timeout_ms = settings.siblings_wait.count();
    } else {
      wait.timeout_ms = settings.connect_budget.count();
    }
    const rpc::wait_result result = c.wait(wait);
    for (const rpc::section_dto& section : result.batch.sections)
      if (section.child_id == child) return with_content(response, section.text);
    if (result.batch.deferred > 0) return with_content(response, held_back_note(parent, child, text.size()));
    return not_bounded(response, "handoffd answered no section for it");
  } catch (const std::exception& e) {
    return not_bounded(response, std::string("handoffd: ") + e.what());
  }
}

std::string run_hook_event(const std::string& input, const hook_settings& settings);

// Headless, a background agent's notice cannot be replaced (hook_settings::attended): the call
// runs in the foreground, where PostToolUse bounds its answer. A call with no run_in_background
// (what models usually send) runs in the background in `claude -p` too (2.1.328 and 2.1.332,
// measured), so only an explicit `false` is left as it is.
std::string foreground_when_headless(const json& hook, const hook_settings& settings) {
  if (settings.attended || !hook.contains("tool_input") || !hook["tool_input"].is_object()) return {};
  json input = hook["tool_input"];
  const auto background = input.find("run_in_background");
  if (background != input.end() && background->is_boolean() && !background->get<bool>()) return {};
  input["run_in_background"] = false;
  return json{{"hookSpecificOutput", {{"hookEventName", "PreToolUse"}, {"updatedInput", input}}}}.dump(
      -1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

std::string grouped(std::size_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string held_back_note(const std::string& parent, const std::string& child, std::size_t bytes) {
  // The command names this very executable, quoted as the footers quote theirs.
  const std::string self = rpc::own_executable().string();
  std::string command;
  append_shell_word(command, self.empty() ? std::string("handoff") : self);
  command += " wait --reader claude-code --parent ";
  append_shell_word(command, parent);
  command.push_back(' ');
  append_shell_word(command, child);
  return "[handoff: this agent's report (" + grouped(bytes) +
         " bytes) was held back to keep this turn within its budget; it is kept in handoffd. Get it when you have "
         "room: Bash `" + command + "`]";
}

std::optional<rpc::usage_dto> usage_of(const transcript_turn& turn, const hook_settings& settings) {
  if (!settings.context_window || !turn.context_tokens || *settings.context_window <= 0) return std::nullopt;
  rpc::usage_dto usage;
  usage.context_window = *settings.context_window;
  usage.tokens = std::min(*turn.context_tokens, usage.context_window);
  usage.percent = 100.0 * static_cast<double>(*usage.tokens) / static_cast<double>(usage.context_window);
  return usage;
}

client::connection connect(const hook_settings& settings, bool start) {
  client::options options;
  options.socket = settings.socket;
  options.call_timeout = settings.connect_budget;
  if (start && (options.start = client::autostart_from_environment()))
    options.start->timeout = std::min(options.start->timeout, settings.connect_budget);
  return client::connection(options);
}

std::string agent_answer_text(const json& content) {
  std::string text;
  bool first = true;
  if (!content.is_array()) return text;
  for (const json& block : content) {
    if (!block.is_object() || block.value("type", "") != "text" || !block.contains("text") || !block["text"].is_string())
      continue;
    if (!first) text.push_back('\n');
    text += block["text"].get_ref<const std::string&>();
    first = false;
  }
  return text;
}

bool fits_unchanged(const std::string& text) {
  const surface_caps caps = framed_caps(surface_caps::wait(), claude_code_reader);
  return fits(text, projection_limits{caps.per_result_bytes, caps.max_lines});
}

bool run_claude_code_deliverer(const std::string& input, const hook_settings& settings,
                               const std::function<void(const std::string&)>& hand_over) {
  try {
    if (input.size() > max_hook_input_bytes) return false;
    const json hook = json::parse(input, nullptr, false);
    if (!hook.is_object() || hook.value("hook_event_name", "") != "UserPromptSubmit") return false;
    return deliver_reports(hook, settings, hand_over);
  } catch (const std::exception&) {
    return false;
  }
}

std::string run_claude_code_hook(const std::string& input, const hook_settings& settings) {
  // One place for input of unexpected types (a number where a string was meant, ...): the tool's
  // own output stands, as for any input this hook does not handle.
  try {
    return run_hook_event(input, settings);
  } catch (const std::exception&) {
    return {};
  }
}

namespace {

std::string run_hook_event(const std::string& input, const hook_settings& settings) {
  if (input.size() > max_hook_input_bytes) return {};
  const json hook = json::parse(input, nullptr, false);
  if (!hook.is_object()) return {};
  const std::string event = hook.value("hook_event_name", "");
  const std::string tool = hook.value("tool_name", "");
  if (event == "UserPromptSubmit") return gate_notice(hook, settings);
  if (event == "SubagentStop" || (event == "PreToolUse" && tool == "SubagentHandback")) {
    capture_report(hook, settings);
    return {};
  }
  if (tool != "Agent") return {};
  if (event == "PreToolUse") return foreground_when_headless(hook, settings);
  if (event == "PostToolUseFailure") {
    cancel_child(hook, settings);
    return {};
  }
  if (event != "PostToolUse" || !hook.contains("tool_response") || !hook["tool_response"].is_object()) return {};
  const json& response = hook["tool_response"];
  const std::string status = response.value("status", "");
  if (status == "async_launched") {
    cancel_child(hook, settings);
    return {};
  }
  if (status != "completed" || !response.contains("content") || !response["content"].is_array()) return {};
  return bound_agent_answer(hook, response, settings);
}

}  // namespace

}  // namespace handoff::cli
