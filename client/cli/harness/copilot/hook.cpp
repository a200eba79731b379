#include "cli/harness/copilot/hook.hpp"

#include <sys/stat.h>

#include <cctype>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cli/harness/copilot/transcript.hpp"
#include "cli/harness/core/bound_child.hpp"
#include "cli/harness/core/daemon_link.hpp"
#include "cli/harness/core/local_bound.hpp"
#include "engine/text/reader_profile.hpp"

namespace handoff::cli::copilot {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string not_bounded(const std::string& why) {
  return "handoff: this subagent result was not bounded (" + why + "); it passes as Copilot CLI gave it";
}

// The answer that has Copilot give the model `text` for the child.
std::string modified_response(const std::string& text) {
  return json{{"modifiedResponse", text}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string input_text(const json& object, const char* key) {
  if (!object.contains(key) || !object[key].is_string()) return {};
  return object[key].get<std::string>();
}

// handoffd did not bound it (`why`): the head and tail cut here, the full text in a private
// copy the footer names; an answer that fits passes whole with the one line, if both stay under
// Copilot's cut (read_agent's header counted).
hook_answer bounded_here(const std::string& answer, const std::string& why) {
  if (hook_core::fits_alone(answer, copilot_reader)) {
    const std::string whole = answer + "\n\n" + hook_core::passes_whole_line(why);
    if (whole.size() + copilot_reader.frame_bytes <= copilot_reader.result_bytes) return {modified_response(whole), {}};
    return {{}, not_bounded(why)};
  }
  try {
    const fs::path copy = hook_core::write_private_copy(hook_core::unbounded_dir(), answer);
    return {modified_response(hook_core::local_head_tail(answer, copilot_reader, copy, why)), {}};
  } catch (const std::exception& e) {
    return {{}, not_bounded(why + "; then " + e.what())};
  }
}

// A full text handoff wrote: <dir>/<64 hex digits>.txt, `dir` one of `dirs`, the path absolute
// and normal, a regular file (not a symlink).
bool is_full_text(const fs::path& path, const std::vector<fs::path>& dirs) {
  if (!path.is_absolute() || path.lexically_normal() != path) return false;
  const std::string name = path.filename().string();
  if (name.size() != 64 + 4 || !name.ends_with(".txt")) return false;
  for (std::size_t i = 0; i < 64; ++i)
    if (!std::isxdigit(static_cast<unsigned char>(name[i])) || std::isupper(static_cast<unsigned char>(name[i]))) return false;
  bool in_dir = false;
  for (const fs::path& dir : dirs) in_dir = in_dir || (!dir.empty() && path.parent_path() == dir.lexically_normal());
  if (!in_dir) return false;
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// preToolUse: Copilot's view of a full text a footer names is allowed; nothing else is answered.
hook_answer allow_full_text_view(const json& hook, const std::vector<std::string>& stores) {
  if (input_text(hook, "toolName") != "view" || !hook.contains("toolArgs") || !hook["toolArgs"].is_object()) return {};
  const std::string path = input_text(hook["toolArgs"], "path");
  std::vector<fs::path> dirs(stores.begin(), stores.end());
  dirs.push_back(hook_core::unbounded_dir());
  if (path.empty() || !is_full_text(path, dirs)) return {};
  return {json{{"permissionDecision", "allow"}, {"permissionDecisionReason", "handoff: the full text of a subagent's answer"}}
              .dump(-1, ' ', false, json::error_handler_t::replace),
          {}};
}

// The transcript of session `session`: ${COPILOT_HOME:-$HOME/.copilot}/session-state/<session>/
// events.jsonl; empty when the id is not a plain name or neither variable is set.
fs::path session_transcript(const std::string& session) {
  if (session.empty() || session.size() > 128) return {};
  for (const char c : session)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return {};
  fs::path home;
  if (const char* dir = std::getenv("COPILOT_HOME"); dir != nullptr && *dir != '\0')
    home = dir;
  else if (const char* user = std::getenv("HOME"); user != nullptr && *user != '\0')
    home = fs::path(user) / ".copilot";
  return home.empty() ? home : home / "session-state" / session / "events.jsonl";
}

// postToolUseFailure of a task: the child will not complete (no subagentStop runs for it), so
// handoffd cancels it and no sibling's wait waits for it. Its input names neither the call nor
// the transcript: the session's transcript gives the call, by its arguments, and whose it is.
hook_answer forget_failed_task(const json& hook, const hook_core::hook_settings& settings) {
  if (input_text(hook, "toolName") != "task" || !hook.contains("toolArgs")) return {};
  const std::string session = input_text(hook, "sessionId");
  const fs::path path = session_transcript(session);
  if (path.empty()) return {};
  const std::optional<task_call> call = find_task_call(path, hook["toolArgs"]);
  if (!call) return {};
  hook_core::cancel_child(settings, call->agent.empty() ? session : call->agent, call->call_id);
  return {};
}

hook_answer run_event(const std::string& input, const hook_core::hook_settings& settings,
                      const std::vector<std::string>& stores) {
  if (input.size() > hook_core::max_hook_input_bytes) return {};
  const json hook = json::parse(input, nullptr, false);
  if (hook.is_object() && hook.contains("toolName") && hook.contains("error")) return forget_failed_task(hook, settings);
  if (hook.is_object() && hook.contains("toolName") && !hook.contains("response")) return allow_full_text_view(hook, stores);
  if (!hook.is_object() || !hook.contains("response") || !hook["response"].is_string()) return {};
  const std::string answer = hook["response"].get<std::string>();
  const std::string agent = input_text(hook, "agentId");
  std::string parent = input_text(hook, "parentAgentId");
  if (parent.empty()) parent = input_text(hook, "sessionId");
  if (agent.empty() || parent.empty()) {
    if (!hook_core::fits_alone(answer, copilot_reader)) return {{}, not_bounded("no agent or session in the hook input")};
    return {};
  }
  const std::string transcript = input_text(hook, "transcriptPath");
  const copilot_call call = transcript.empty() ? copilot_call{} : read_copilot_call(transcript, agent);

  hook_core::finished_child f;
  for (const std::string& id : call.siblings) f.siblings.push_back({id, {}});
  if (f.siblings.empty() && hook_core::fits_alone(answer, copilot_reader)) return {};
  f.parent = parent;
  f.child = call.call_id.empty() ? agent : call.call_id;
  f.title = call.title;
  f.answer = answer;
  f.usage = hook_core::usage_against(call.tokens, settings.context_window ? settings.context_window : call.window);
  f.reader = &copilot_reader;
  const hook_core::bound_outcome outcome = hook_core::bound_child(f, settings);
  switch (outcome.what) {
    case hook_core::bound_outcome::kind::section:
      if (!outcome.section.truncated && outcome.section.text == answer) return {};
      return {modified_response(outcome.section.text), {}};
    case hook_core::bound_outcome::kind::held_back:
      return {modified_response(outcome.text), {}};
    case hook_core::bound_outcome::kind::not_bounded:
    case hook_core::bound_outcome::kind::unreachable:
      break;
  }
  return bounded_here(answer, hook_core::why_not_bounded(outcome));
}

}  // namespace

hook_answer run_hook(const std::string& input, const hook_core::hook_settings& settings,
                     const std::vector<std::string>& stores) {
  // One place for input of unexpected types: the child's answer (or Copilot's permission) stands.
  try {
    return run_event(input, settings, stores);
  } catch (const std::exception& e) {
    return {{}, not_bounded(e.what())};
  }
}

}  // namespace handoff::cli::copilot
