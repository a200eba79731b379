#include "cli/harness/gemini/hook.hpp"

#include <fcntl.h>

#include <exception>
#include <filesystem>
#include <string_view>
#include <vector>

#include "cli/harness/core/bound_child.hpp"
#include "cli/harness/core/daemon_link.hpp"
#include "cli/harness/core/local_bound.hpp"
#include "cli/harness/gemini/turn.hpp"
#include "engine/fs/posix_io.hpp"
#include "engine/fs/sha256.hpp"
#include "engine/text/reader_profile.hpp"

namespace handoff::cli::gemini {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view tool_name = "invoke_agent";

// The "{\n  \"response\": \"...\"\n}" a generalist submits (its output is an object with one
// string member, pretty-printed): the string. Anything else: as it is.
std::string unwrapped(std::string result) {
  if (result.empty() || result.front() != '{') return result;
  const json parsed = json::parse(result, nullptr, false);
  if (parsed.is_object() && parsed.size() == 1 && parsed.contains("response") && parsed["response"].is_string())
    return parsed["response"].get<std::string>();
  return result;
}

bool fits_alone(const std::string& text) { return hook_core::fits_alone(text, gemini_reader); }

std::string not_bounded(const std::string& why) {
  return "handoff: this subagent result was not bounded (" + why + "); it passes as Gemini CLI gave it";
}

// The bounded text with the daemon's artifact path replaced by the copy's, which Gemini's
// read_file may read. Paths with a quote are left alone (the footer quotes them for the shell).
std::string pointing_at(std::string text, const std::string& from, const std::string& to) {
  if (from.empty() || from.find('\'') != std::string::npos || to.find('\'') != std::string::npos) return text;
  for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) text.replace(at, from.size(), to);
  return text;
}

// The answer that has Gemini's read_file return `bounded` as the call's result.
std::string read_file_request(const fs::path& bounded) {
  return json{{"hookSpecificOutput",
               {{"hookEventName", "AfterTool"},
                {"tailToolCallRequest", {{"name", "read_file"}, {"args", {{"file_path", bounded.string()}}}}}}}}
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

// A file's bytes (not through a symlink, at most `most`); nullopt when it cannot be read.
std::optional<std::string> private_text(const fs::path& path, std::size_t most) {
  try {
    unique_fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) return std::nullopt;
    return read_all(fd.get(), most, "a bounded copy");
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// A hook run again for a call it already answered (Gemini running the same AfterTool input
// twice): handoffd delivered the child the first time and answers no section now. The bounded
// copy that run wrote stands when it names the full copy of this very answer.
bool answered_before(const fs::path& dir, const std::string& child, const std::string& answer) {
  const fs::path copy = dir / (sha256_hex(answer).substr(0, 16) + ".txt");
  const std::optional<std::string> full = private_text(copy, answer.size() + 1);
  if (!full || *full != answer) return false;
  const std::optional<std::string> bounded = private_text(dir / (child + ".txt"), answer.size() + 64 * 1024);
  return bounded && bounded->find(copy.string()) != std::string::npos;
}

struct call {
  std::string parent;      // session_id
  std::string child;       // gemini_child_id
  std::string title;       // the agent's name
  fs::path transcript;     // transcript_path
  gemini_turn turn;
};

std::optional<call> call_of(const json& hook) {
  call c;
  c.parent = hook.value("session_id", "");
  c.transcript = hook.value("transcript_path", "");
  if (c.parent.empty() || c.transcript.empty() || !hook.contains("tool_input")) return std::nullopt;
  c.turn = read_gemini_turn(c.transcript);
  if (c.turn.id.empty()) return std::nullopt;
  c.child = gemini_child_id(c.turn.id, hook["tool_input"]);
  if (hook["tool_input"].is_object()) c.title = hook["tool_input"].value("agent_name", "");
  return c;
}

// The full text's copy where read_file may read it, named by its hash as in the store.
fs::path full_copy_path(const fs::path& dir, const std::string& answer) {
  return dir / (sha256_hex(answer).substr(0, 16) + ".txt");
}

// handoffd's section for the call: the bounded text in a 0600 file beside the full copy, both
// where read_file reads; nothing when the batch left it whole (Gemini's own result passes).
hook_answer from_section(const fs::path& dir, const std::string& child, const std::string& answer,
                         const rpc::section_dto& mine) {
  if (!mine.truncated && mine.text == answer) return {};
  make_private_dir(dir);
  std::string text = mine.text;
  if (mine.artifact && mine.artifact->saved) {
    const fs::path copy = full_copy_path(dir, answer);
    write_private_file(copy, answer);
    text = pointing_at(std::move(text), mine.artifact->path, copy.string());
  }
  const fs::path bounded = dir / (child + ".txt");
  write_private_file(bounded, text);
  return {read_file_request(bounded), {}};
}

// handoffd did not bound it (`why`): the hook cuts the head and tail itself, the full copy and
// the bounded text in the same files as above; an answer that fits passes as Gemini gave it.
hook_answer bounded_here(const fs::path& dir, const std::string& child, const std::string& answer,
                         const std::string& why) {
  if (fits_alone(answer)) return {{}, not_bounded(why)};
  make_private_dir(dir);
  const fs::path copy = full_copy_path(dir, answer);
  write_private_file(copy, answer);
  const fs::path bounded = dir / (child + ".txt");
  write_private_file(bounded, hook_core::local_head_tail(answer, gemini_reader, copy, why));
  return {read_file_request(bounded), {}};
}

hook_answer bound(const call& c, const std::string& answer, const hook_core::hook_settings& settings) {
  const fs::path temp = gemini_project_temp(c.transcript);
  const fs::path dir = temp / "handoff";
  const turn_marks marks(temp, c.parent, c.turn.id);
  hook_core::finished_child f;
  for (std::string& id : marks.list())
    if (id != c.child) f.siblings.push_back({std::move(id), {}});
  if (f.siblings.empty() && fits_alone(answer)) {
    marks.remove(c.child);
    return {};
  }
  f.parent = c.parent;
  f.child = c.child;
  f.title = c.title;
  f.answer = answer;
  f.usage = hook_core::usage_against(c.turn.tokens, settings.context_window.value_or(default_context_window));
  f.reader = &gemini_reader;
  const hook_core::bound_outcome outcome = hook_core::bound_child(f, settings);
  hook_answer result;
  try {
    switch (outcome.what) {
      case hook_core::bound_outcome::kind::section:
        result = from_section(dir, c.child, answer, outcome.section);
        break;
      case hook_core::bound_outcome::kind::held_back:
        result.note = not_bounded("its turn's budget had no room for it");
        break;
      case hook_core::bound_outcome::kind::not_bounded:
        if (answered_before(dir, c.child, answer)) {
          result.out = read_file_request(dir / (c.child + ".txt"));
          break;
        }
        [[fallthrough]];
      case hook_core::bound_outcome::kind::unreachable:
        result = bounded_here(dir, c.child, answer, hook_core::why_not_bounded(outcome));
        break;
    }
  } catch (const std::exception& e) {
    result = {{}, not_bounded(hook_core::why_not_bounded(outcome) + "; then " + e.what())};
  }
  marks.remove(c.child);
  return result;
}

// A child that failed will not complete: no sibling's wait should wait for it.
void forget(const call& c, const hook_core::hook_settings& settings) {
  turn_marks(gemini_project_temp(c.transcript), c.parent, c.turn.id).remove(c.child);
  hook_core::cancel_child(settings, c.parent, c.child, c.title);
}

hook_answer run_event(const std::string& input, const hook_core::hook_settings& settings) {
  if (input.size() > hook_core::max_hook_input_bytes) return {};
  const json hook = json::parse(input, nullptr, false);
  if (!hook.is_object() || hook.value("tool_name", "") != tool_name) return {};
  const std::string event = hook.value("hook_event_name", "");
  const std::optional<call> c = call_of(hook);
  if (event == "BeforeTool") {
    if (c) turn_marks(gemini_project_temp(c->transcript), c->parent, c->turn.id).add(c->child);
    return {};
  }
  if (event != "AfterTool" || !hook.contains("tool_response")) return {};
  const std::optional<std::string> answer = child_answer(hook["tool_response"]);
  if (!c) {
    if (answer && !fits_alone(*answer)) return {{}, not_bounded("no session or transcript in the hook input")};
    return {};
  }
  if (!answer) {
    forget(*c, settings);
    return {};
  }
  return bound(*c, *answer, settings);
}

}  // namespace

std::optional<std::string> child_answer(const nlohmann::json& response) {
  if (!response.is_object()) return std::nullopt;
  if (response.contains("error") && !response["error"].is_null()) return std::nullopt;
  // returnDisplay is the subagent's progress object: its `result` is the answer, unframed.
  if (response.contains("returnDisplay") && response["returnDisplay"].is_object()) {
    const nlohmann::json& display = response["returnDisplay"];
    if (display.value("state", "") == "completed" && display.contains("result") && display["result"].is_string())
      return unwrapped(display["result"].get<std::string>());
  }
  // Else llmContent: [{text: "Subagent 'X' finished.\nTermination Reason: R\nResult:\n" + answer}].
  if (!response.contains("llmContent")) return std::nullopt;
  const nlohmann::json& content = response["llmContent"];
  std::string text;
  if (content.is_string()) {
    text = content.get<std::string>();
  } else if (content.is_array() && content.size() == 1 && content[0].is_object() && content[0].contains("text") &&
             content[0]["text"].is_string()) {
    text = content[0]["text"].get<std::string>();
  } else {
    return std::nullopt;
  }
  constexpr std::string_view head = "Subagent '";
  constexpr std::string_view reason = "' finished.\nTermination Reason: ";
  constexpr std::string_view result = "\nResult:\n";
  if (!text.starts_with(head)) return std::nullopt;
  const std::size_t r = text.find(reason);
  if (r == std::string::npos) return std::nullopt;
  const std::size_t body = text.find(result, r + reason.size());
  if (body == std::string::npos || text.find('\n', r + reason.size()) != body) return std::nullopt;
  return unwrapped(text.substr(body + result.size()));
}

hook_answer run_hook(const std::string& input, const hook_core::hook_settings& settings) {
  // One place for input of unexpected types: the tool's own result stands.
  try {
    return run_event(input, settings);
  } catch (const std::exception& e) {
    return {{}, not_bounded(e.what())};
  }
}

}  // namespace handoff::cli::gemini
