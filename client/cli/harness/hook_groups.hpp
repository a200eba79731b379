// The hooks block Claude Code and Gemini CLI share in their settings.json: "hooks" maps each
// event to a list of matcher groups, {"matcher": "...", "hooks": [{"type": "command",
// "command": "..."}]}. What a setup checks of it and how it takes its own hooks out.
#pragma once

#include <filesystem>
#include <functional>
#include <span>

#include <nlohmann/json.hpp>

namespace handoff::cli {

// Refuses (std::runtime_error "PATH: ...") a "hooks" that is not an object, or one of `events`
// in it that is not an array: a shape handoff does not merge into. No "hooks" at all is fine.
void check_hooks_shape(const nlohmann::ordered_json& settings, std::span<const char* const> events,
                       const std::filesystem::path& path);

// Removes the hooks `ours` picks from one event's list of matcher groups, and the groups that
// leaves empty; a group that had none of them stays as it is, even an empty one.
void drop_hooks(nlohmann::ordered_json& groups, const std::function<bool(const nlohmann::ordered_json&)>& ours);

}  // namespace handoff::cli
