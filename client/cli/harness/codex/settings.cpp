#include "cli/harness/codex/settings.hpp"

#include <algorithm>
#include <tuple>

namespace handoff::cli {

std::vector<std::string> codex_provider_env_keys(const toml::table& root) {
  const toml::table* providers = root["model_providers"].as_table();
  if (providers == nullptr) return {};
  std::vector<std::tuple<toml::source_position, std::string>> found;
  for (const auto& [name, provider] : *providers) {
    const toml::table* table = provider.as_table();
    if (table == nullptr) continue;
    const toml::value<std::string>* env_key = (*table)["env_key"].as_string();
    if (env_key != nullptr && !env_key->get().empty()) found.emplace_back(env_key->source().begin, env_key->get());
  }
  std::sort(found.begin(), found.end());  // toml++ keeps a table's keys sorted: back to file order
  std::vector<std::string> keys;
  for (auto& [at, key] : found) {
    const bool passed = std::find(std::begin(codex_passed_env), std::end(codex_passed_env), key) != std::end(codex_passed_env);
    if (!passed && std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
  }
  return keys;
}

std::string codex_server_table(const codex_server& server) {
  std::string env_vars;
  const auto add = [&](std::string_view name) { env_vars += (env_vars.empty() ? "" : ", ") + toml_quoted(name); };
  for (const std::string_view name : codex_passed_env) add(name);
  for (const std::string& name : server.env_keys) add(name);
  return "[mcp_servers.handoff]\n"
         "command = " + toml_quoted(server.command) + "\n"
         "args = [\"mcp\"]\n"
         "env = { CODEX_HOME = " + toml_quoted(server.codex_home) + " }\n"
         "env_vars = [" + env_vars + "]\n"
         "startup_timeout_sec = " + std::to_string(codex_startup_timeout_sec) + "\n"
         "tool_timeout_sec = " + std::to_string(codex_tool_timeout_sec) + "\n";
}

}  // namespace handoff::cli
