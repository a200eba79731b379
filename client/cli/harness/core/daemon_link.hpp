// How a hook reaches handoffd: one connection within the hook's budget, the cancel of a child
// that will not complete, and the note for a result its batch held back.
#pragma once

#include <cstddef>
#include <string>

#include "cli/harness/core/hook_settings.hpp"
#include "engine/text/reader_profile.hpp"
#include "handoff/client.hpp"

namespace handoff::cli::hook_core {

// A connection to handoffd within settings.connect_budget (each call, too). `start`: when no
// handoffd answers, start one within the same budget, as every client that needs a daemon does
// (client/lib/handoff/daemon_start.hpp), unless HANDOFF_AUTOSTART=0. Throws client errors.
client::connection connect(const hook_settings& settings, bool start);

// A child that will not complete here (it failed, or went to the background): handoffd hears
// of it and cancels it, so a sibling's wait does not wait for it. No daemon is started for it
// (none running: no sibling waits), and nothing is thrown: nothing waits on a child handoffd
// never heard of.
void cancel_child(const hook_settings& settings, const std::string& parent, const std::string& child,
                  const std::string& title = {});

// 171016 -> "171,016".
std::string grouped(std::size_t n);

// What the model gets for a result a wait deferred (its batch had no room for it): that it is
// kept in handoffd and the shell command (this executable's `wait --reader NAME`) that gets it,
// named for `reader`'s shell tool.
std::string held_back_note(const reader_profile& reader, const std::string& parent, const std::string& child,
                           std::size_t bytes);

}  // namespace handoff::cli::hook_core
