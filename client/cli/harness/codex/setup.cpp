// `handoff setup codex [--codex-home DIR] [--keep-native-agents] [--dry-run] [--remove]`.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cli/harness/codex/entry.hpp"
#include "cli/harness/codex/settings.hpp"
#include "cli/harness/settings_file.hpp"
#include "protocol/default_paths.hpp"

namespace handoff::cli::codex {
namespace {

namespace fs = std::filesystem;

struct codex_setup_options : setup_flags {
  std::string codex_home;  // --codex-home DIR: Codex's home [$CODEX_HOME, else ~/.codex]
  bool keep_native = false;  // --keep-native-agents: leave Codex's own subagent tools on
};

// Codex's home, absolute, or empty when neither the option, CODEX_HOME nor HOME gives one.
fs::path setup_codex_home(const codex_setup_options& options) {
  fs::path home;
  if (!options.codex_home.empty()) {
    home = options.codex_home;
  } else if (const char* env = std::getenv("CODEX_HOME"); env != nullptr && *env != '\0') {
    home = env;
  } else if (const char* user = std::getenv("HOME"); user != nullptr && *user != '\0') {
    home = fs::path(user) / ".codex";
  } else {
    return {};
  }
  std::string normal = fs::absolute(home).lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

// What is about to be written reads back as meant: valid TOML, with handoff's server as written
// (or without it). A failure here is handoff's bug, and nothing is written.
void check_codex_config(const std::string& text, const fs::path& path, const codex_server* server) {
  toml::table root;
  try {
    root = toml::parse(text, path.string());
  } catch (const toml::parse_error& e) {
    throw std::runtime_error(path.string() + ": the edited file would not be valid TOML at line " +
                             std::to_string(e.source().begin.line) + " (" + std::string(e.description()) +
                             "); nothing was changed (a bug in handoff: please report it)");
  }
  const toml::node* entry = std::as_const(root)["mcp_servers"]["handoff"].node();
  const bool as_meant = server == nullptr ? entry == nullptr : entry != nullptr && codex_server_matches(*entry, *server);
  if (!as_meant)
    throw std::runtime_error(path.string() + ": the edited file would not read back as written; nothing was changed (a bug "
                             "in handoff: please report it)");
}

int run_codex_setup(const codex_setup_options& options, setup_report& report) {
  const fs::path home = setup_codex_home(options);
  if (home.empty())
    return report.failed("codex", "neither CODEX_HOME nor HOME is set; pass --codex-home DIR", exit_usage);
  const fs::path path = home / "config.toml";
  codex_server server{rpc::own_executable().string(), home.string(), {}};
  std::vector<std::string> kept;  // "[features] multi_agent = true (handoff's: false)": set by the user otherwise
  if (server.command.empty())
    return report.failed("codex", "cannot tell this handoff's own path (/proc/self/exe), which Codex is to start",
                         exit_failure);
  return run_setup("codex", report, [&] {
    edit_settings_text({"codex", path, options.remove, options.mode, &report},
                       [&](const std::optional<std::string>& before) -> std::optional<std::string> {
                         const std::string text = before.value_or("");
                         const toml_config config(text, path.string(), codex_server_key);
                         if (options.remove) {
                           std::string after = toml_without_marked(config.has_table() ? config.without_table() : text, path.string());
                           if (after == text) return std::nullopt;
                           check_codex_config(after, path, nullptr);
                           return after;
                         }
                         server.env_keys = codex_provider_env_keys(config.root());
                         const toml::node* entry = config.root()["mcp_servers"]["handoff"].node();
                         std::string after = entry != nullptr && codex_server_matches(*entry, server)
                                                 ? text
                                                 : config.with_table(codex_server_table(server));
                         after = toml_without_marked(after, path.string());  // --keep-native-agents, or as new
                         if (!options.keep_native) {
                           // Refusals name the lines of the file as the user has it.
                           for (const toml_marked_key& line : codex_native_agents_off)
                             (void)toml_with_marked(text, path.string(), line, nullptr);
                         }
                         if (!options.keep_native)
                           for (const toml_marked_key& line : codex_native_agents_off) {
                             std::string users;
                             after = toml_with_marked(after, path.string(), line, &users);
                             if (!users.empty() && users != line.value)
                               kept.push_back("[" + toml_key_text(line.table) + "] " + line.key + " = " + users +
                                              " (handoff's: " + line.value + ")");
                           }
                         if (after == text) return std::nullopt;
                         check_codex_config(after, path, &server);
                         return after;
                       });
    if (!options.remove && options.mode == setup_mode::write) {
      if (options.keep_native)
        std::printf("setup codex: Codex's own subagent tools stay on (--keep-native-agents): a model may delegate "
                    "through them, and their answers are not bounded\n");
      else if (kept.empty())
        std::printf("setup codex: Codex's own subagent tools are off ([features] multi_agent = false, "
                    "[features.multi_agent_v2] disable_native_tools = true), so a model delegates through handoff's; "
                    "--keep-native-agents keeps them\n");
      for (const std::string& k : kept)
        std::printf("setup codex: kept your %s as you set it: the Codex subagent tools it governs stay on\n", k.c_str());
    }
  });
}

}  // namespace

setup_fn add_setup(CLI::App& app) {
  auto options = std::make_shared<codex_setup_options>();
  app.add_option("--codex-home", options->codex_home, "Codex's home, whose config.toml to edit [$CODEX_HOME, else ~/.codex]");
  app.add_flag("--keep-native-agents", options->keep_native,
               "Leave Codex's own subagent tools on (by default setup turns them off, so that a model delegates "
               "through handoff's bounded tools)");
  return setup_runner(app, options, run_codex_setup);
}

}  // namespace handoff::cli::codex
