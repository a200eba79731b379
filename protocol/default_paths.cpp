#include "protocol/default_paths.hpp"

#include <cstdlib>

namespace handoff::rpc {
namespace {

// An unset and an empty variable mean the same: not configured.
std::filesystem::path env_path(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? std::filesystem::path(v) : std::filesystem::path();
}

// $name, else $HOME/fallback, else empty.
std::filesystem::path env_or_home(const char* name, const std::filesystem::path& fallback) {
  if (auto set = env_path(name); !set.empty()) return set;
  if (auto home = env_path("HOME"); !home.empty()) return home / fallback;
  return {};
}

}  // namespace

std::filesystem::path default_artifact_dir() {
  std::filesystem::path cache = env_path("XDG_CACHE_HOME");
  if (!cache.is_absolute()) {
    const auto home = env_path("HOME");
    cache = home.empty() ? home : home / ".cache";
  }
  return cache.empty() ? cache : cache / "handoff" / "results";
}

std::filesystem::path legacy_artifact_dir() {
  const auto agent = env_or_home("PI_CODING_AGENT_DIR", std::filesystem::path(".pi") / "agent");
  return agent.empty() ? agent : agent / "cache" / "openpi" / "subagent-results";
}

std::filesystem::path default_queue_dir() {
  const auto state = env_or_home("XDG_STATE_HOME", std::filesystem::path(".local") / "state");
  return state.empty() ? state : state / "handoff" / "queue";
}

std::filesystem::path own_executable() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path{} : self;
}

}  // namespace handoff::rpc
