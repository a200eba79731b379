#include "cli/harness/opencode/hook.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/harness/core/bound_child.hpp"
#include "cli/harness/core/daemon_link.hpp"
#include "cli/harness/core/local_bound.hpp"
#include "engine/text/reader_profile.hpp"

namespace handoff::cli::opencode {
namespace {

using nlohmann::json;

constexpr std::string_view result_open = "\n<task_result>\n";
constexpr std::string_view result_close = "\n</task_result>\n</task>";

std::string string_member(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string with_note(std::string output, const std::string& why) {
  output += "\n\n[handoff: this result was not bounded (" + why + ")]";
  return output;
}

bool fits_alone(const std::string& text) { return hook_core::fits_alone(text, opencode_reader); }

// The whole of the file opencode saved the untruncated output in: a regular file (not followed
// through a symlink) of at most hook_core::max_hook_input_bytes.
std::optional<std::string> saved_output(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::size_t>(st.st_size) > hook_core::max_hook_input_bytes)
    return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return text;
}

// The parent's context use: the sum of its latest assistant message's tokens against the
// window; nullopt when either is unknown (the static caps apply).
std::optional<rpc::usage_dto> usage_from(const json& hook, const hook_core::hook_settings& settings) {
  std::optional<std::int64_t> window = settings.context_window;
  if (const auto it = hook.find("contextWindow"); it != hook.end() && it->is_number() && it->get<double>() >= 1)
    window = static_cast<std::int64_t>(it->get<double>());
  const auto tokens = hook.find("tokens");
  if (tokens == hook.end() || !tokens->is_object()) return std::nullopt;
  double sum = 0;
  for (const char* key : {"input", "output", "reasoning"})
    if (const auto v = tokens->find(key); v != tokens->end() && v->is_number()) sum += std::max(0.0, v->get<double>());
  if (const auto cache = tokens->find("cache"); cache != tokens->end() && cache->is_object())
    for (const char* key : {"read", "write"})
      if (const auto v = cache->find(key); v != cache->end() && v->is_number()) sum += std::max(0.0, v->get<double>());
  if (sum <= 0) return std::nullopt;  // a message not yet answered: nothing known
  return hook_core::usage_against(static_cast<std::int64_t>(std::min(sum, 1e15)), window);
}

std::vector<std::string> siblings_of(const json& hook, const std::string& self) {
  std::vector<std::string> out;
  const auto it = hook.find("siblings");
  if (it == hook.end() || !it->is_array()) return out;
  for (const json& s : *it)
    if (s.is_string() && !s.get_ref<const std::string&>().empty() && s.get_ref<const std::string&>() != self &&
        std::find(out.begin(), out.end(), s.get<std::string>()) == out.end() && out.size() < 63)
      out.push_back(s.get<std::string>());
  return out;
}

// handoffd did not bound it (`why`): the hook cuts the head and tail itself. When opencode cut
// the output, its saved copy at `saved_path` holds `full` (the whole framed output): that is
// projected, so the footer's line numbers are the file's. Otherwise the answer is, inside
// opencode's frame, with a private copy of it. An answer that fits, or one no copy could be
// written for, passes as opencode made it, with the one line.
std::string bounded_here(const std::string& output, const std::string& full, const std::string& saved_path,
                         const std::optional<task_frame>& frame, const std::string& answer, const std::string& why) {
  const auto whole = [&](const std::string& more) { return output + "\n\n" + hook_core::passes_whole_line(why + more); };
  try {
    if (!saved_path.empty()) {
      if (fits_alone(full)) return full + "\n\n" + hook_core::passes_whole_line(why);
      return hook_core::local_head_tail(full, opencode_reader, saved_path, why);
    }
    if (fits_alone(answer)) return whole("");
    const std::filesystem::path copy = hook_core::keep_unbounded_copy(answer);
    const std::string text = hook_core::local_head_tail(answer, opencode_reader, copy, why);
    return frame ? frame->open + text + frame->close : text;
  } catch (const std::exception& e) {
    return whole(std::string("; not cut here: ") + e.what());
  }
}

void cancel_failed(const json& hook, const hook_core::hook_settings& settings) {
  hook_core::cancel_child(settings, string_member(hook, "sessionID"), string_member(hook, "callID"));
}

std::string bound_task(const json& hook, const hook_core::hook_settings& settings) {
  hook_core::finished_child c;
  c.parent = string_member(hook, "sessionID");
  c.child = string_member(hook, "callID");
  const std::string output = string_member(hook, "output");
  if (c.parent.empty() || c.child.empty()) return {};

  // The full output: opencode's saved copy when it cut the one it hands over.
  std::string full = output;
  const std::string path = string_member(hook, "outputPath");
  if (!path.empty()) {
    const std::optional<std::string> saved = saved_output(path);
    if (!saved) return with_note(output, "opencode's full copy at " + path + " could not be read");
    full = *saved;
  }
  const std::optional<task_frame> frame = split_task_output(full);
  c.answer = frame ? frame->answer : full;
  for (std::string& s : siblings_of(hook, c.child)) c.siblings.push_back({std::move(s), {}});
  if (c.siblings.empty() && full == output && fits_alone(c.answer)) return {};  // short and alone: as it is

  c.title = string_member(hook, "title");
  c.usage = usage_from(hook, settings);
  c.reader = &opencode_reader;
  const hook_core::bound_outcome outcome = hook_core::bound_child(c, settings);
  switch (outcome.what) {
    case hook_core::bound_outcome::kind::section:
    case hook_core::bound_outcome::kind::held_back:
      return frame ? frame->open + outcome.text + frame->close : outcome.text;
    case hook_core::bound_outcome::kind::not_bounded:
    case hook_core::bound_outcome::kind::unreachable:
      break;
  }
  return bounded_here(output, full, path, frame, c.answer, hook_core::why_not_bounded(outcome));
}

std::string run_event(const std::string& input, const hook_core::hook_settings& settings) {
  if (input.size() > hook_core::max_hook_input_bytes) return {};
  const json hook = json::parse(input, nullptr, false);
  if (!hook.is_object()) return {};
  const std::string event = hook.contains("event") ? string_member(hook, "event") : "completed";
  if (event == "failed") {
    cancel_failed(hook, settings);
    return {};
  }
  if (event != "completed") return {};
  return bound_task(hook, settings);
}

}  // namespace

std::optional<task_frame> split_task_output(const std::string& output) {
  // `<task id="ses_..." state="completed">` + result_open ... result_close, as opencode 1.18.33
  // writes it; the answer is everything between, whatever it holds.
  if (!output.starts_with("<task ")) return std::nullopt;
  const std::size_t open_end = output.find('>');
  if (open_end == std::string::npos || output.compare(open_end + 1, result_open.size(),
                                                      result_open) != 0)
    return std::nullopt;
  const std::size_t answer_at = open_end + 1 + result_open.size();
  if (!output.ends_with(result_close) ||
      output.size() < answer_at + result_close.size())
    return std::nullopt;
  const std::size_t close_at = output.size() - result_close.size();
  return task_frame{output.substr(0, answer_at), output.substr(answer_at, close_at - answer_at),
                    output.substr(close_at)};
}

std::string run_hook(const std::string& input, const hook_core::hook_settings& settings) {
  // One place for input of unexpected types: the task's own output stands.
  try {
    return run_event(input, settings);
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace handoff::cli::opencode
