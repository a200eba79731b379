#include "cli/harness/codex/turn.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace handoff::cli::codex {
namespace {

constexpr std::array<std::pair<phase, std::string_view>, 5> names = {{
    {phase::waiting, "waiting"},
    {phase::queued, "queued"},
    {phase::running, "running"},
    {phase::finished, "finished"},
    {phase::cancelled, "cancelled"},
}};

}  // namespace

std::string_view phase_name(phase p) noexcept {
  for (const auto& [each, name] : names)
    if (each == p) return name;
  return "finished";
}

std::optional<phase> phase_named(std::string_view name) noexcept {
  for (const auto& [each, spelled] : names)
    if (spelled == name) return each;
  return std::nullopt;
}

bool child::busy() const {
  return std::any_of(turns.begin(), turns.end(), [](const std::unique_ptr<turn>& t) {
    return t->phase == phase::waiting || t->phase == phase::queued || t->phase == phase::running;
  });
}

}  // namespace handoff::cli::codex
