// `handoff hook NAME`: one subcommand per harness of the table that has a hook
// (cli/harness/harness.hpp).
#include "cli/hook_command.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <utility>
#include <vector>

#include "cli/harness/harness.hpp"

namespace handoff::cli {

command add_hook_command(CLI::App& app, std::shared_ptr<const daemon_options> daemon) {
  CLI::App* hook = add_daemon_subcommand(app, "hook", "Hooks a harness runs (installed by `handoff setup`)");
  hook->require_subcommand(1);
  auto chosen = std::make_shared<std::vector<std::pair<CLI::App*, run_fn>>>();
  for (const harness& h : harnesses()) {
    if (h.add_hook == nullptr) continue;
    CLI::App* sub = hook->add_subcommand(std::string(h.name), std::string(h.hook_help));
    chosen->emplace_back(sub, h.add_hook(*sub, daemon));
  }
  return command{hook, [chosen] {
                   for (const auto& [sub, run] : *chosen)
                     if (sub->parsed()) return run();
                   return exit_usage;
                 }};
}

}  // namespace handoff::cli
