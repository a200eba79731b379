// Every knob of handoffd, with its default. Set on the command line or in a config file
// (CLI11 INI/TOML: `key = value`, the long option names without dashes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "engine/text/budget.hpp"
#include "protocol/daemon_messages.hpp"
#include "protocol/messages.hpp"

namespace CLI {
class App;
}

namespace handoff::daemon {

struct config {
  std::filesystem::path socket_path;    // default rpc::daemon_socket_location() (socket_location.hpp)
  std::filesystem::path artifact_dir;   // default ${XDG_CACHE_HOME:-~/.cache}/handoff/results
  // The store's former default (rpc::legacy_artifact_dir), read and drained while it exists
  // (legacy_store.hpp); empty when --artifact-dir was given: a store the user chose is the only one.
  std::filesystem::path legacy_artifact_dir;
  std::filesystem::path queue_dir;      // default ${XDG_STATE_HOME:-~/.local/state}/handoff/queue
  std::string cli_path;                 // the `handoff` the footers name; default cli_path.hpp

  std::size_t max_frame_bytes = 20 * 1024 * 1024;  // one JSON-RPC frame, bytes
  std::size_t max_depth = 64;                      // JSON nesting per message
  std::size_t max_connections = 256;               // concurrent client connections
  std::size_t max_outbox_bytes = 8 * 1024 * 1024;  // unsent bytes per connection before it is dropped
  std::uint32_t frame_timeout_ms = 30'000;         // a started frame must complete within this
  std::uint32_t usage_timeout_ms = 2'000;          // wait for a context/usage answer
  std::uint32_t deliver_timeout_ms = 60'000;       // wait for a parent/deliver acknowledgement
  std::uint32_t flush_delay_ms = 50;               // coalesce completions arriving together
  std::uint64_t forget_after_ms = 3'600'000;       // a quiet parent / settled child is forgotten after this
  std::size_t workers = 2;                         // disk/hash worker threads
  std::uint32_t spin_us = 100;                     // the I/O thread polls this long before sleeping (io_loop.hpp)
  double head_share = 0.75;                        // projection head share, [0.05, 0.95]

  rpc::wire_limits wire{};                           // caps on client fields
  surface_caps auto_caps = surface_caps::auto_delivery();
  surface_caps wait_caps = surface_caps::wait();
  dynamic_policy policy{};

  // Store hygiene (engine/store/store_gc.hpp), run every gc_interval_s and by `daemon/gc`.
  std::uint32_t gc_max_age_days = 7;              // artifacts older than this (mtime) go, days, >= 1
  std::uint64_t gc_max_bytes = std::uint64_t{1} << 30;  // then oldest first down to this, bytes
  std::uint32_t gc_interval_s = 3600;             // between periodic runs, seconds; 0 = never
  std::uint32_t gc_keep_delivered_s = 86400;      // artifacts delivered within this stay, seconds

  // Started by a client (docs/design.md §12): --background detaches once the
  // socket listens; --idle-exit-ms stops a daemon that has had no connection and nothing to send
  // for that long (0: never). Neither applies under socket activation.
  bool background = false;
  std::uint64_t idle_exit_ms = 0;
  std::filesystem::path log_file;     // --background's log; default <queue dir>/../handoffd.log

  std::string log_level = "info";    // trace|debug|info|warn|error|off
  std::string log_format = "text";   // text|json
};

// Adds every option to `app` (bound to `cfg`) and the --config file option.
void add_options(CLI::App& app, config& cfg);

// Fills unset paths from the environment; throws std::runtime_error naming what is missing, or
// std::invalid_argument for a bad --cli-path.
void resolve_defaults(config& cfg);

// Checks ranges after parsing; throws std::invalid_argument naming the option.
void validate(const config& cfg);

// The effective limits as reported by `initialize` and docs/protocol.md.
rpc::limits_dto limits_of(const config& cfg);

}  // namespace handoff::daemon
