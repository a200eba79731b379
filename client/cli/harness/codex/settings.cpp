#include "cli/harness/codex/settings.hpp"

#include <algorithm>
#include <cstddef>
#include <tuple>

namespace handoff::cli::codex {

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

namespace {

// TOML values compared by what they say: an integer and a float by their value, tables by their
// keys whatever their order or form (inline, header); other kinds than handoff writes differ.
bool codex_same_toml(const toml::node& a, const toml::node& b) {
  const auto number = [](const toml::node& n) {
    return n.is_integer() ? static_cast<double>(n.as_integer()->get()) : n.as_floating_point()->get();
  };
  if (a.is_number() && b.is_number()) return number(a) == number(b);
  if (a.type() != b.type()) return false;
  if (a.is_string()) return a.as_string()->get() == b.as_string()->get();
  if (a.is_boolean()) return a.as_boolean()->get() == b.as_boolean()->get();
  if (const toml::array* left = a.as_array()) {
    const toml::array& right = *b.as_array();
    if (left->size() != right.size()) return false;
    for (std::size_t i = 0; i < left->size(); ++i)
      if (!codex_same_toml((*left)[i], right[i])) return false;
    return true;
  }
  if (const toml::table* left = a.as_table()) {
    const toml::table& right = *b.as_table();
    if (left->size() != right.size()) return false;
    for (const auto& [key, value] : *left) {
      const toml::node* other = right.get(key);
      if (other == nullptr || !codex_same_toml(value, *other)) return false;
    }
    return true;
  }
  return false;
}

}  // namespace

bool codex_server_matches(const toml::node& entry, const codex_server& server) {
  toml::table written;
  try {
    written = toml::parse(codex_server_table(server));
  } catch (const toml::parse_error&) {
    return false;  // a path TOML cannot hold: check_codex_config says so before anything is written
  }
  return codex_same_toml(entry, *written["mcp_servers"]["handoff"].node());
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
         "tool_timeout_sec = " + std::to_string(codex_tool_timeout_sec) + "\n"
         "default_tools_approval_mode = \"approve\"\n";
}

}  // namespace handoff::cli::codex
