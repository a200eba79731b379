// `handoff setup NAME`: one subcommand per harness of the table (cli/harness/harness.hpp).
#include "cli/setup_command.hpp"

#include <memory>
#include <vector>

#include "cli/harness/harness.hpp"

namespace handoff::cli {

command add_setup_command(CLI::App& app) {
  CLI::App* setup =
      app.add_subcommand("setup", "Install handoff into a harness's settings (or take it out, or check it is there)");
  setup->require_subcommand(1);
  auto chosen = std::make_shared<std::vector<std::pair<CLI::App*, setup_fn>>>();
  for (const harness& h : harnesses()) {
    CLI::App* sub = setup->add_subcommand(std::string(h.name), std::string(h.setup_help));
    chosen->emplace_back(sub, h.add_setup(*sub));
  }
  return command{setup, [chosen] {
                   for (const auto& [sub, run] : *chosen)
                     if (sub->parsed()) {
                       setup_report report;  // prints what it is told as it comes
                       return run(report);
                     }
                   return exit_usage;
                 }};
}

}  // namespace handoff::cli
