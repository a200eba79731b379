#include "cli/harness/cline/hook.hpp"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/harness/core/bound_child.hpp"
#include "cli/harness/core/daemon_link.hpp"
#include "cli/harness/core/local_bound.hpp"
#include "engine/text/reader_profile.hpp"

namespace handoff::cli::cline {
namespace {

using nlohmann::json;

std::string string_member(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool fits_alone(const std::string& text) { return hook_core::fits_alone(text, cline_reader); }

// The parent's context use against the window; nullopt when either is unknown (the static caps
// apply).
std::optional<rpc::usage_dto> usage_from(const json& hook, const hook_core::hook_settings& settings) {
  std::optional<std::int64_t> window = settings.context_window;
  if (const auto it = hook.find("contextWindow"); it != hook.end() && it->is_number() && it->get<double>() >= 1)
    window = static_cast<std::int64_t>(std::min(it->get<double>(), 1e15));
  const auto tokens = hook.find("tokens");
  if (tokens == hook.end() || !tokens->is_number() || tokens->get<double>() <= 0) return std::nullopt;
  return hook_core::usage_against(static_cast<std::int64_t>(std::min(tokens->get<double>(), 1e15)), window);
}

std::vector<hook_core::sibling> siblings_of(const json& hook, const std::string& self) {
  std::vector<hook_core::sibling> out;
  const auto it = hook.find("siblings");
  if (it == hook.end() || !it->is_array()) return out;
  for (const json& s : *it) {
    if (!s.is_string() || s.get_ref<const std::string&>().empty() || s.get_ref<const std::string&>() == self) continue;
    if (std::none_of(out.begin(), out.end(), [&](const hook_core::sibling& o) { return o.id == s; }) && out.size() < 63)
      out.push_back({s.get<std::string>(), {}});
  }
  return out;
}

// handoffd did not bound it (`why`): the hook cuts the head and tail itself, with a private copy
// of the answer for read_files. An answer that fits passes whole with the one line; so does one
// no copy could be written for, when the line still fits under cline's cut (else nothing is
// printed: cline's own cut keeps its first and last 4,000 characters).
std::string bounded_here(const std::string& answer, const std::string& why) {
  const auto whole = [&](const std::string& more) {
    std::string out = answer + "\n\n" + hook_core::passes_whole_line(why + more);
    return out.size() <= cline_reader.result_bytes ? out : std::string();
  };
  if (fits_alone(answer)) return whole("");
  try {
    const std::filesystem::path copy = hook_core::write_private_copy(hook_core::unbounded_dir(), answer);
    return hook_core::local_head_tail(answer, cline_reader, copy, why);
  } catch (const std::exception& e) {
    return whole(std::string("; not cut here: ") + e.what());
  }
}

std::string bound_call(const json& hook, const hook_core::hook_settings& settings) {
  hook_core::finished_child c;
  c.parent = string_member(hook, "agentId");
  c.child = string_member(hook, "callId");
  c.answer = string_member(hook, "text");
  if (c.parent.empty() || c.child.empty() || c.answer.empty()) return {};
  c.siblings = siblings_of(hook, c.child);
  if (c.siblings.empty() && fits_alone(c.answer)) return {};  // short and alone: as cline made it

  c.title = string_member(hook, "title");
  c.usage = usage_from(hook, settings);
  c.reader = &cline_reader;
  const hook_core::bound_outcome outcome = hook_core::bound_child(c, settings);
  switch (outcome.what) {
    case hook_core::bound_outcome::kind::section:
      // A section that is the answer unchanged (it fit its share): cline's own result stands.
      return outcome.text == c.answer ? std::string() : outcome.text;
    case hook_core::bound_outcome::kind::held_back:
      return outcome.text;
    case hook_core::bound_outcome::kind::not_bounded:
    case hook_core::bound_outcome::kind::unreachable:
      break;
  }
  return bounded_here(c.answer, hook_core::why_not_bounded(outcome));
}

}  // namespace

hook_core::hook_settings cline_settings(hook_core::hook_settings settings) {
  settings.connect_budget = std::min(settings.connect_budget, cline_connect_budget);
  settings.siblings_wait = std::min(settings.siblings_wait, cline_siblings_wait_most);
  return settings;
}

std::string run_hook(const std::string& input, const hook_core::hook_settings& settings) {
  // One place for input of unexpected types: cline's own result stands.
  try {
    if (input.size() > hook_core::max_hook_input_bytes) return {};
    const json hook = json::parse(input, nullptr, false);
    if (!hook.is_object()) return {};
    if (string_member(hook, "event") == "failed") {
      // No sibling's wait should wait for a call that ended in an error.
      hook_core::cancel_child(settings, string_member(hook, "agentId"), string_member(hook, "callId"));
      return {};
    }
    return bound_call(hook, settings);
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace handoff::cli::cline
