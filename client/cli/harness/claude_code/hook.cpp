#include "cli/harness/claude_code/hook.hpp"

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <thread>
#include <vector>

#include "cli/harness/claude_code/background.hpp"
#include "cli/harness/claude_code/transcript.hpp"
#include "cli/harness/core/local_bound.hpp"
#include "engine/text/reader_profile.hpp"

namespace handoff::cli::claude_code {
namespace {

using nlohmann::json;

json post_tool_use_answer(const json& response) {
  return json{{"hookSpecificOutput", {{"hookEventName", "PostToolUse"}, {"updatedToolOutput", response}}}};
}

// The original output and one line saying it was not bounded: nothing of the answer is lost.
std::string not_bounded(const json& response, const std::string& why) {
  json out = response;
  out["content"].push_back(json{{"type", "text"}, {"text", hook_core::passes_whole_line(why)}});
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
  hook_core::cancel_child(settings, hook.value("session_id", ""), hook.value("tool_use_id", ""));
}

// handoffd did not bound the answer (outcome): its head and tail all the same, cut here, with a
// private copy of the full text where Claude Code's Read reaches it; when no copy can be
// written, or the answer fits, the output as it is with the one line.
std::string bound_locally(const json& response, const std::string& text, const std::string& why) {
  if (fits_unchanged(text)) return not_bounded(response, why);
  try {
    const std::filesystem::path copy = hook_core::keep_unbounded_copy(text);
    return with_content(response, hook_core::local_head_tail(text, claude_code_reader, copy, why));
  } catch (const std::exception& e) {
    return not_bounded(response, why + "; no private copy: " + e.what());
  }
}

std::string bound_agent_answer(const json& hook, const json& response, const hook_settings& settings) {
  hook_core::finished_child c;
  c.parent = hook.value("session_id", "");
  c.child = hook.value("tool_use_id", "");
  c.answer = agent_answer_text(response["content"]);
  c.reader = &claude_code_reader;
  if (c.parent.empty() || c.child.empty()) return {};

  // Claude Code writes its transcript behind the tools it runs: on a busy machine the turn's
  // assistant message was seen to land after the agents' hooks started. Read again until it is
  // there, for a bounded time; then go on without it (no siblings, no usage: static caps).
  const std::string transcript = hook.value("transcript_path", "");
  transcript_turn turn = read_transcript_turn(transcript, c.child);
  const auto give_up = std::chrono::steady_clock::now() + settings.transcript_wait;
  while (turn.agents.empty() && !transcript.empty() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    turn = read_transcript_turn(transcript, c.child);
  }
  for (const agent_call& call : turn.agents)
    if (call.tool_use_id != c.child && !call.background) c.siblings.push_back({call.tool_use_id, call.description});
  if (c.siblings.empty() && fits_unchanged(c.answer)) return {};  // short and alone: as it is

  if (hook.contains("tool_input") && hook["tool_input"].is_object())
    c.title = hook["tool_input"].value("description", "");
  c.usage = usage_of(turn, settings);
  const hook_core::bound_outcome outcome = hook_core::bound_child(c, settings);
  switch (outcome.what) {
    case hook_core::bound_outcome::kind::section:
    case hook_core::bound_outcome::kind::held_back:
      return with_content(response, outcome.text);
    case hook_core::bound_outcome::kind::not_bounded:
    case hook_core::bound_outcome::kind::unreachable:
      break;
  }
  return bound_locally(response, c.answer, hook_core::why_not_bounded(outcome));
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

std::string held_back_note(const std::string& parent, const std::string& child, std::size_t bytes) {
  return hook_core::held_back_note(claude_code_reader, parent, child, bytes);
}

std::optional<rpc::usage_dto> usage_of(const transcript_turn& turn, const hook_settings& settings) {
  return hook_core::usage_against(turn.context_tokens, settings.context_window);
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

bool fits_unchanged(const std::string& text) { return hook_core::fits_alone(text, claude_code_reader); }

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

}  // namespace handoff::cli::claude_code
