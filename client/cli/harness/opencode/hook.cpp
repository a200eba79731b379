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

#include "engine/text/batch.hpp"
#include "engine/text/projection.hpp"
#include "engine/text/projection_notice.hpp"
#include "engine/text/reader_profile.hpp"
#include "handoff/client.hpp"
#include "protocol/default_paths.hpp"

namespace handoff::cli {
namespace opencode_detail {
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

bool fits_alone(const std::string& text) {
  const surface_caps caps = framed_caps(surface_caps::wait(), opencode_reader);
  return fits(text, projection_limits{caps.per_result_bytes, caps.max_lines});
}

client::connection dial(const opencode_hook_settings& settings, bool start) {
  client::options options;
  options.socket = settings.socket;
  options.call_timeout = settings.connect_budget;
  if (start && (options.start = client::autostart_from_environment()))
    options.start->timeout = std::min(options.start->timeout, settings.connect_budget);
  return client::connection(options);
}

// The whole of the file opencode saved the untruncated output in: a regular file (not followed
// through a symlink) of at most max_opencode_input_bytes.
std::optional<std::string> saved_output(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::size_t>(st.st_size) > max_opencode_input_bytes)
    return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return text;
}

// The parent's context use: the sum of its latest assistant message's tokens against the
// window; nullopt when either is unknown (the static caps apply).
std::optional<rpc::usage_dto> usage_from(const json& hook, const opencode_hook_settings& settings) {
  std::optional<std::int64_t> window = settings.context_window;
  if (const auto it = hook.find("contextWindow"); it != hook.end() && it->is_number() && it->get<double>() >= 1)
    window = static_cast<std::int64_t>(it->get<double>());
  const auto tokens = hook.find("tokens");
  if (!window || tokens == hook.end() || !tokens->is_object()) return std::nullopt;
  double sum = 0;
  for (const char* key : {"input", "output", "reasoning"})
    if (const auto v = tokens->find(key); v != tokens->end() && v->is_number()) sum += std::max(0.0, v->get<double>());
  if (const auto cache = tokens->find("cache"); cache != tokens->end() && cache->is_object())
    for (const char* key : {"read", "write"})
      if (const auto v = cache->find(key); v != cache->end() && v->is_number()) sum += std::max(0.0, v->get<double>());
  if (sum <= 0) return std::nullopt;  // a message not yet answered: nothing known
  rpc::usage_dto usage;
  usage.context_window = *window;
  usage.tokens = std::min(static_cast<std::int64_t>(sum), *window);
  usage.percent = 100.0 * static_cast<double>(*usage.tokens) / static_cast<double>(*window);
  return usage;
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

// A deferred result (the batch had no room for it): where it is kept and how to get it.
std::string held_back(const std::string& parent, const std::string& child, std::size_t bytes) {
  const std::string self = rpc::own_executable().string();
  std::string command;
  append_shell_word(command, self.empty() ? std::string("handoff") : self);
  command += " wait --reader opencode --parent ";
  append_shell_word(command, parent);
  command.push_back(' ');
  append_shell_word(command, child);
  return "[handoff: this subagent's answer (" + std::to_string(bytes) +
         " bytes) was held back to keep this step within its budget; it is kept in handoffd. Get it when you have "
         "room: bash `" + command + "`]";
}

void cancel_failed(const json& hook, const opencode_hook_settings& settings) {
  const std::string parent = string_member(hook, "sessionID");
  const std::string child = string_member(hook, "callID");
  if (parent.empty() || child.empty()) return;
  try {
    client::connection c = dial(settings, false);  // no daemon: no sibling waits for it
    c.started({parent, child, ""});
    c.cancel({parent, {child}});
  } catch (const std::exception&) {
    // Nothing waits on a child handoffd never heard of.
  }
}

std::string bound_task(const json& hook, const opencode_hook_settings& settings) {
  const std::string parent = string_member(hook, "sessionID");
  const std::string child = string_member(hook, "callID");
  const std::string output = string_member(hook, "output");
  if (parent.empty() || child.empty()) return {};

  // The full output: opencode's saved copy when it cut the one it hands over.
  std::string full = output;
  if (const std::string path = string_member(hook, "outputPath"); !path.empty()) {
    const std::optional<std::string> saved = saved_output(path);
    if (!saved) return with_note(output, "opencode's full copy at " + path + " could not be read");
    full = *saved;
  }
  const std::optional<task_frame> frame = split_task_output(full);
  const std::string& answer = frame ? frame->answer : full;
  const std::vector<std::string> siblings = siblings_of(hook, child);
  if (siblings.empty() && full == output && fits_alone(answer)) return {};  // short and alone: as it is

  try {
    client::connection c = dial(settings, true);
    for (const std::string& s : siblings) c.started({parent, s, ""});
    rpc::completed_params done;
    done.parent_id = parent;
    done.child_id = child;
    done.title = string_member(hook, "title");
    done.status = "done";
    done.final_text = answer;
    c.completed(done);

    rpc::wait_params wait;
    wait.parent_id = parent;
    wait.child_ids = {child};
    wait.reader = std::string(opencode_reader.name);
    wait.usage = usage_from(hook, settings);
    if (!siblings.empty()) {
      wait.batch_with.push_back(child);
      wait.batch_with.insert(wait.batch_with.end(), siblings.begin(), siblings.end());
      wait.timeout_ms = settings.siblings_wait.count();
    } else {
      wait.timeout_ms = settings.connect_budget.count();
    }
    const rpc::wait_result result = c.wait(wait);
    const auto framed = [&](const std::string& text) { return frame ? frame->open + text + frame->close : text; };
    for (const rpc::section_dto& section : result.batch.sections)
      if (section.child_id == child) return framed(section.text);
    if (result.batch.deferred > 0) return framed(held_back(parent, child, answer.size()));
    return with_note(output, "handoffd answered no section for it");
  } catch (const std::exception& e) {
    return with_note(output, std::string("handoffd: ") + e.what());
  }
}

std::string run_event(const std::string& input, const opencode_hook_settings& settings) {
  if (input.size() > max_opencode_input_bytes) return {};
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
}  // namespace opencode_detail

std::optional<task_frame> split_task_output(const std::string& output) {
  // `<task id="ses_..." state="completed">` + result_open ... result_close, as opencode 1.18.33
  // writes it; the answer is everything between, whatever it holds.
  if (!output.starts_with("<task ")) return std::nullopt;
  const std::size_t open_end = output.find('>');
  if (open_end == std::string::npos || output.compare(open_end + 1, opencode_detail::result_open.size(),
                                                      opencode_detail::result_open) != 0)
    return std::nullopt;
  const std::size_t answer_at = open_end + 1 + opencode_detail::result_open.size();
  if (!output.ends_with(opencode_detail::result_close) ||
      output.size() < answer_at + opencode_detail::result_close.size())
    return std::nullopt;
  const std::size_t close_at = output.size() - opencode_detail::result_close.size();
  return task_frame{output.substr(0, answer_at), output.substr(answer_at, close_at - answer_at),
                    output.substr(close_at)};
}

std::string run_opencode_hook(const std::string& input, const opencode_hook_settings& settings) {
  // One place for input of unexpected types: the task's own output stands.
  try {
    return opencode_detail::run_event(input, settings);
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace handoff::cli
