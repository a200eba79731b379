#include "cli/harness/codex/codex_env.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "cli/harness/codex/file_reads.hpp"

namespace handoff::cli::codex {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::size_t codex_unknown_model_bytes = 10'000;  // Codex's limit for a model without metadata
constexpr std::size_t codex_marker_bytes = 36;              // what it keeps back for its cut marker
constexpr std::size_t max_config_bytes = 16 << 20;          // as setup codex reads it
constexpr std::size_t rollout_tail_bytes = 8 << 20;         // how far back the latest token_count is looked for

std::string env_or(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : std::move(fallback);
}

bool executable(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

// The entries of `dir` whose names `keep` accepts, newest name first (Codex's dated folders).
std::vector<fs::path> newest_first(const fs::path& dir, bool (*keep)(std::string_view)) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (keep(it->path().filename().native())) out.push_back(it->path());
  std::sort(out.begin(), out.end(), [](const fs::path& a, const fs::path& b) { return a.filename() > b.filename(); });
  return out;
}

bool digits(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<fs::path> rollout_of(const fs::path& home, const std::string& thread_id) {
  const std::string suffix = "-" + thread_id + ".jsonl";
  for (const fs::path& year : newest_first(home / "sessions", digits))
    for (const fs::path& month : newest_first(year, digits))
      for (const fs::path& day : newest_first(month, digits))
        for (const fs::path& file : newest_first(day, [](std::string_view n) { return n.starts_with("rollout-"); }))
          if (file.filename().native().ends_with(suffix)) return file;
  return std::nullopt;
}

std::optional<std::int64_t> count_of(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<std::int64_t>();
}

}  // namespace

fs::path codex_home() {
  const char* set = std::getenv("CODEX_HOME");
  if (set != nullptr && *set != '\0') return fs::path(set);
  return fs::path(env_or("HOME", "/")) / ".codex";
}

fs::path codex_binary() {
  const std::string chosen = env_or("HANDOFF_CODEX", "");
  if (!chosen.empty()) return chosen;
  const std::string path = env_or("PATH", "");
  std::vector<fs::path> dirs;
  for (std::size_t from = 0; from <= path.size();) {
    const std::size_t colon = std::min(path.find(':', from), path.size());
    if (colon > from) dirs.emplace_back(path.substr(from, colon - from));
    from = colon + 1;
  }
  for (const fs::path& dir : dirs)
    if (executable(dir / "codex")) return dir / "codex";
  // Codex 0.169.0 starts its servers with $CODEX_HOME/tmp/arg0-linux/codex-arg0*/ first on PATH:
  // links named for its helper tools, each to the codex binary itself.
  for (const fs::path& dir : dirs) {
    if (dir.filename().native().find("codex-arg0") == std::string::npos) continue;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->is_symlink(ec)) continue;
      const fs::path target = fs::canonical(it->path(), ec);
      if (!ec && executable(target) && target.filename().native().starts_with("codex")) return target;
    }
  }
  return {};
}

std::size_t codex_output_bytes(const fs::path& home, std::size_t forced) {
  if (forced != 0) return forced;
  std::size_t limit = codex_unknown_model_bytes;
  const std::string text = codex::read_tail(home / "config.toml", max_config_bytes);
  if (!text.empty()) {
    try {
      const toml::table root = toml::parse(text);
      if (const std::optional<std::int64_t> tokens = root["tool_output_token_limit"].value<std::int64_t>();
          tokens && *tokens > 0 && *tokens < (std::int64_t{1} << 40))
        limit = static_cast<std::size_t>(*tokens) * 4;
    } catch (const toml::parse_error&) {
      // Codex refuses such a file itself; the default is the safe side
    }
  }
  const std::size_t budget = limit * 6 / 5;
  return budget > codex_marker_bytes ? budget - codex_marker_bytes : 0;
}

std::optional<rpc::usage_dto> codex_thread_usage(const fs::path& home, const std::string& thread_id) {
  const std::optional<fs::path> rollout = rollout_of(home, thread_id);
  if (!rollout) return std::nullopt;
  const std::string tail = codex::read_tail(*rollout, rollout_tail_bytes);
  const std::string_view all = tail;
  for (std::size_t end = all.size(); end > 0;) {  // the lines, last first
    const std::size_t newline = all.rfind('\n', end - 1);
    const std::size_t begin = newline == std::string_view::npos ? 0 : newline + 1;
    const std::string_view line = all.substr(begin, end - begin);
    end = newline == std::string_view::npos ? 0 : newline;
    if (line.find("\"token_count\"") == std::string_view::npos) continue;
    const json event = json::parse(line, nullptr, false);
    if (!event.is_object()) continue;
    const json& payload = event.value("payload", json::object());
    if (!payload.is_object() || payload.value("type", "") != "token_count") continue;
    const json& info = payload.value("info", json());
    if (!info.is_object()) continue;
    const json& last = info.value("last_token_usage", json());
    const std::optional<std::int64_t> window = count_of(info, "model_context_window");
    if (!last.is_object() || !window || *window <= 0) continue;
    std::optional<std::int64_t> tokens = count_of(last, "total_tokens");
    if (!tokens) {
      const std::optional<std::int64_t> in = count_of(last, "input_tokens");
      const std::optional<std::int64_t> out = count_of(last, "output_tokens");
      if (in) tokens = *in + out.value_or(0);
    }
    rpc::usage_dto usage;
    usage.tokens = tokens;
    usage.context_window = *window;
    if (tokens) usage.percent = static_cast<double>(*tokens) * 100.0 / static_cast<double>(*window);
    return usage;
  }
  return std::nullopt;
}

}  // namespace handoff::cli::codex
