#include "cli/harness/core/daemon_link.hpp"

#include <algorithm>
#include <exception>

#include "engine/text/shell_word.hpp"
#include "protocol/default_paths.hpp"

namespace handoff::cli::hook_core {

client::connection connect(const hook_settings& settings, bool start) {
  client::options options;
  options.socket = settings.socket;
  options.call_timeout = settings.connect_budget;
  if (start && (options.start = client::autostart_from_environment()))
    options.start->timeout = std::min(options.start->timeout, settings.connect_budget);
  return client::connection(options);
}

void cancel_child(const hook_settings& settings, const std::string& parent, const std::string& child,
                  const std::string& title) {
  if (parent.empty() || child.empty()) return;
  try {
    client::connection c = connect(settings, false);
    c.started({parent, child, title});
    c.cancel({parent, {child}});
  } catch (const std::exception&) {
    // Nothing waits on a child handoffd never heard of.
  }
}

std::string grouped(std::size_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string held_back_note(const reader_profile& reader, const std::string& parent, const std::string& child,
                           std::size_t bytes) {
  // The command names this very executable, quoted as the footers quote theirs.
  const std::string self = rpc::own_executable().string();
  std::string command;
  append_shell_word(command, self.empty() ? std::string("handoff") : self);
  command += " wait --reader ";
  command += reader.name;
  command += " --parent ";
  append_shell_word(command, parent);
  command.push_back(' ');
  append_shell_word(command, child);
  return "[handoff: this subagent's answer (" + grouped(bytes) +
         " bytes) was held back to keep this turn within its budget; it is kept in handoffd. Get it when you have "
         "room: " + std::string(reader.bash_tool) + " `" + command + "`]";
}

}  // namespace handoff::cli::hook_core
