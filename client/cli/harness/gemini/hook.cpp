#include "cli/harness/gemini/hook.hpp"

#include <fcntl.h>

#include <exception>
#include <filesystem>
#include <string_view>
#include <vector>

#include "cli/harness/claude_code/hook.hpp"
#include "cli/harness/gemini/turn.hpp"
#include "engine/fs/posix_io.hpp"
#include "engine/fs/sha256.hpp"
#include "engine/text/batch.hpp"
#include "engine/text/projection.hpp"
#include "engine/text/reader_profile.hpp"
#include "handoff/client.hpp"

namespace handoff::cli {
namespace gemini_detail {
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

bool fits_alone(const std::string& text) {
  const surface_caps caps = framed_caps(surface_caps::wait(), gemini_reader);
  return fits(text, projection_limits{caps.per_result_bytes, caps.max_lines});
}

client::connection dial(const gemini_hook_settings& settings, bool start) {
  client::options options;
  options.socket = settings.socket;
  options.call_timeout = settings.connect_budget;
  if (start && (options.start = client::autostart_from_environment()))
    options.start->timeout = std::min(options.start->timeout, settings.connect_budget);
  return client::connection(options);
}

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

gemini_hook_answer bound(const call& c, const std::string& answer, const gemini_hook_settings& settings) {
  const fs::path temp = gemini_project_temp(c.transcript);
  const turn_marks marks(temp, c.parent, c.turn.id);
  std::vector<std::string> siblings;
  for (std::string& id : marks.list())
    if (id != c.child) siblings.push_back(std::move(id));
  if (siblings.empty() && fits_alone(answer)) {
    marks.remove(c.child);
    return {};
  }
  gemini_hook_answer result;
  try {
    client::connection conn = dial(settings, true);
    for (const std::string& s : siblings) conn.started({c.parent, s, ""});
    rpc::completed_params done;
    done.parent_id = c.parent;
    done.child_id = c.child;
    done.title = c.title;
    done.status = "done";
    done.final_text = answer;
    conn.completed(done);

    rpc::wait_params wait;
    wait.parent_id = c.parent;
    wait.child_ids = {c.child};
    wait.reader = std::string(gemini_reader.name);
    if (c.turn.tokens && settings.context_window > 0) {
      rpc::usage_dto usage;
      usage.context_window = settings.context_window;
      usage.tokens = std::min(*c.turn.tokens, settings.context_window);
      usage.percent = 100.0 * static_cast<double>(*usage.tokens) / static_cast<double>(settings.context_window);
      wait.usage = usage;
    }
    if (!siblings.empty()) {
      wait.batch_with.push_back(c.child);
      for (const std::string& s : siblings) wait.batch_with.push_back(s);
      wait.timeout_ms = settings.siblings_wait.count();
    } else {
      wait.timeout_ms = settings.connect_budget.count();
    }
    const rpc::wait_result waited = conn.wait(wait);
    const rpc::section_dto* mine = nullptr;
    for (const rpc::section_dto& section : waited.batch.sections)
      if (section.child_id == c.child) mine = &section;
    if (mine == nullptr && waited.batch.deferred == 0 && answered_before(temp / "handoff", c.child, answer)) {
      result.out = read_file_request(temp / "handoff" / (c.child + ".txt"));
    } else if (mine == nullptr) {
      result.note = not_bounded(waited.batch.deferred > 0 ? "its turn's budget had no room for it"
                                                          : "handoffd answered no section for it");
    } else if (!mine->truncated && mine->text == answer) {
      // Whole: Gemini's own result passes byte for byte.
    } else {
      const fs::path dir = temp / "handoff";
      make_private_dir(dir);
      std::string text = mine->text;
      if (mine->artifact && mine->artifact->saved) {
        // The full text, where read_file may read it: named by its hash, as in the store.
        const fs::path copy = dir / (mine->artifact->sha256.substr(0, 16) + ".txt");
        write_private_file(copy, answer);
        text = pointing_at(std::move(text), mine->artifact->path, copy.string());
      }
      const fs::path bounded = dir / (c.child + ".txt");
      write_private_file(bounded, text);
      result.out = read_file_request(bounded);
    }
  } catch (const std::exception& e) {
    result = {{}, not_bounded(std::string("handoffd: ") + e.what())};
  }
  marks.remove(c.child);
  return result;
}

// A child that failed will not complete: no sibling's wait should wait for it.
void forget(const call& c, const gemini_hook_settings& settings) {
  turn_marks(gemini_project_temp(c.transcript), c.parent, c.turn.id).remove(c.child);
  try {
    client::connection conn = dial(settings, false);
    conn.started({c.parent, c.child, c.title});
    conn.cancel({c.parent, {c.child}});
  } catch (const std::exception&) {
    // Nothing waits on a child handoffd never heard of.
  }
}

gemini_hook_answer run_event(const std::string& input, const gemini_hook_settings& settings) {
  if (input.size() > max_hook_input_bytes) return {};
  const json hook = json::parse(input, nullptr, false);
  if (!hook.is_object() || hook.value("tool_name", "") != tool_name) return {};
  const std::string event = hook.value("hook_event_name", "");
  const std::optional<call> c = call_of(hook);
  if (event == "BeforeTool") {
    if (c) turn_marks(gemini_project_temp(c->transcript), c->parent, c->turn.id).add(c->child);
    return {};
  }
  if (event != "AfterTool" || !hook.contains("tool_response")) return {};
  const std::optional<std::string> answer = gemini_child_answer(hook["tool_response"]);
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
}  // namespace gemini_detail

std::optional<std::string> gemini_child_answer(const nlohmann::json& response) {
  if (!response.is_object()) return std::nullopt;
  if (response.contains("error") && !response["error"].is_null()) return std::nullopt;
  // returnDisplay is the subagent's progress object: its `result` is the answer, unframed.
  if (response.contains("returnDisplay") && response["returnDisplay"].is_object()) {
    const nlohmann::json& display = response["returnDisplay"];
    if (display.value("state", "") == "completed" && display.contains("result") && display["result"].is_string())
      return gemini_detail::unwrapped(display["result"].get<std::string>());
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
  return gemini_detail::unwrapped(text.substr(body + result.size()));
}

gemini_hook_answer run_gemini_hook(const std::string& input, const gemini_hook_settings& settings) {
  // One place for input of unexpected types: the tool's own result stands.
  try {
    return gemini_detail::run_event(input, settings);
  } catch (const std::exception& e) {
    return {{}, gemini_detail::not_bounded(e.what())};
  }
}

}  // namespace handoff::cli
