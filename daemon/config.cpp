#include "config.hpp"

#include <stdexcept>
#include <string>
#include <utility>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "system/cli_path.hpp"
#include "engine/fs/private_dir.hpp"
#include "engine/fs/sha256.hpp"
#include "engine/text/batch.hpp"
#include "ledger/preview.hpp"
#include "protocol/default_paths.hpp"
#include "protocol/methods.hpp"
#include "protocol/socket_location.hpp"

namespace handoff::daemon {
namespace {

void add_caps(CLI::App& app, surface_caps& caps, const std::string& prefix, const std::string& what) {
  app.add_option("--" + prefix + "-result-bytes", caps.per_result_bytes,
                 what + ": max bytes of one result's projection")->capture_default_str();
  app.add_option("--" + prefix + "-batch-bytes", caps.per_batch_bytes,
                 what + ": max bytes of one rendered batch")->capture_default_str();
  app.add_option("--" + prefix + "-floor-bytes", caps.floor_bytes,
                 what + ": no result is cut below this many bytes")->capture_default_str();
  app.add_option("--" + prefix + "-max-lines", caps.max_lines,
                 what + ": max lines of one result's projection")->capture_default_str();
}

}  // namespace

void add_options(CLI::App& app, config& cfg) {
  app.set_config("--config", "", "Read options from this INI/TOML file (key = value)");
  app.add_option("--socket", cfg.socket_path,
                 "Unix socket path [$XDG_RUNTIME_DIR/handoff/handoffd.sock; without XDG_RUNTIME_DIR, the "
                 "private ${TMPDIR:-/tmp}/handoff-<uid>/handoffd.sock]");
  app.add_option("--artifact-dir", cfg.artifact_dir,
                 "Artifact store [${XDG_CACHE_HOME:-~/.cache}/handoff/results; while the former default "
                 "${PI_CODING_AGENT_DIR:-~/.pi/agent}/cache/openpi/subagent-results exists, its artifacts "
                 "are read and collected there until it is empty]");
  app.add_option("--queue-dir", cfg.queue_dir, "Durable queue [${XDG_STATE_HOME:-~/.local/state}/handoff/queue]");
  app.add_option("--cli-path", cfg.cli_path,
                 "Absolute path of the handoff CLI the footers tell the parent to run [handoff beside "
                 "handoffd, else ../client/handoff from there, else `handoff` on the parent's PATH]");
  app.add_option("--max-frame-bytes", cfg.max_frame_bytes, "Max bytes of one JSON-RPC frame")->capture_default_str();
  app.add_option("--max-depth", cfg.max_depth, "Max JSON nesting depth of one message")->capture_default_str();
  app.add_option("--max-connections", cfg.max_connections, "Max concurrent connections")->capture_default_str();
  app.add_option("--max-outbox-bytes", cfg.max_outbox_bytes,
                 "Unsent bytes a connection may hold before it is dropped")->capture_default_str();
  app.add_option("--frame-timeout-ms", cfg.frame_timeout_ms,
                 "A frame that has started must complete within this")->capture_default_str();
  app.add_option("--usage-timeout-ms", cfg.usage_timeout_ms,
                 "How long to wait for a parent's " + std::string(rpc::methods::context_usage.name) + " answer")->capture_default_str();
  app.add_option("--deliver-timeout-ms", cfg.deliver_timeout_ms,
                 "How long to wait for a parent's " + std::string(rpc::methods::parent_deliver.name) + " acknowledgement")->capture_default_str();
  app.add_option("--flush-delay-ms", cfg.flush_delay_ms,
                 "Coalesce completions arriving within this before an auto-delivery")->capture_default_str();
  app.add_option("--forget-after-ms", cfg.forget_after_ms,
                 "Forget a parent this long after it hung up with nothing pending, and a delivered or "
                 "cancelled child this long after it settled")->capture_default_str();
  app.add_option("--workers", cfg.workers, "Threads for hashing and disk writes")->capture_default_str();
  app.add_option("--spin-us", cfg.spin_us,
                 "Microseconds the I/O thread keeps polling after its last request before it sleeps, so "
                 "the next request of a burst needs no wake-up (0: sleep at once)")->capture_default_str();
  app.add_option("--head-share", cfg.head_share, "Share of a projection given to the head")->capture_default_str();
  app.add_option("--max-final-text-bytes", cfg.wire.max_final_text_bytes, "Max bytes of one finalText")
      ->capture_default_str();
  app.add_option("--max-title-bytes", cfg.wire.max_title_bytes, "Max bytes of a title")->capture_default_str();
  app.add_option("--max-error-bytes", cfg.wire.max_error_bytes, "Max bytes of an error text")->capture_default_str();
  add_caps(app, cfg.auto_caps, "auto", "auto-delivery");
  add_caps(app, cfg.wait_caps, "wait", std::string(rpc::methods::subagent_wait.name));
  app.add_option("--headroom-share", cfg.policy.headroom_share,
                 "Share of the parent's free context a batch may use")->capture_default_str();
  app.add_option("--bytes-per-token", cfg.policy.bytes_per_token, "Bytes per token for the dynamic budget")
      ->capture_default_str();
  app.add_option("--gc-max-age-days", cfg.gc_max_age_days, "Artifacts older than this many days are removed")
      ->capture_default_str();
  app.add_option("--gc-max-bytes", cfg.gc_max_bytes, "Then the oldest artifacts until the store holds this many bytes")
      ->capture_default_str();
  app.add_option("--gc-interval-s", cfg.gc_interval_s, "Seconds between store collections (0: never)")
      ->capture_default_str();
  app.add_option("--gc-keep-delivered-s", cfg.gc_keep_delivered_s,
                 "An artifact delivered within this many seconds is never removed")->capture_default_str();
  app.add_flag("--background", cfg.background,
               "Detach (own session, cwd /, output to --log-file) and return once the socket listens: "
               "exit 0 then, 3 when another handoffd already serves the socket, 1 with the reason otherwise");
  app.add_option("--idle-exit-ms", cfg.idle_exit_ms,
                 "Exit after this long with no connection and nothing to deliver (0: never; ignored under "
                 "socket activation)")->capture_default_str();
  app.add_option("--log-file", cfg.log_file,
                 "Where --background writes its log [<queue dir>/../handoffd.log: ~/.local/state/handoff/handoffd.log]");
  app.add_option("--log-level", cfg.log_level, "trace|debug|info|warn|error|off")->capture_default_str();
  app.add_option("--log-format", cfg.log_format, "text|json")->capture_default_str();
}

void resolve_defaults(config& cfg) {
  if (cfg.socket_path.empty()) cfg.socket_path = rpc::daemon_socket_location().path;
  if (cfg.artifact_dir.empty()) {
    if ((cfg.artifact_dir = rpc::default_artifact_dir()).empty())
      throw std::runtime_error("neither XDG_CACHE_HOME nor HOME is set; pass --artifact-dir DIR");
    cfg.legacy_artifact_dir = rpc::legacy_artifact_dir();
  }
  if (cfg.queue_dir.empty() && (cfg.queue_dir = rpc::default_queue_dir()).empty())
    throw std::runtime_error("neither XDG_STATE_HOME nor HOME is set; pass --queue-dir DIR");
  if (cfg.cli_path.empty())
    cfg.cli_path = default_cli_path();
  else
    check_cli_path(cfg.cli_path);
  if (cfg.log_file.empty()) cfg.log_file = std::filesystem::absolute(cfg.queue_dir).parent_path() / "handoffd.log";
  cfg.log_file = std::filesystem::absolute(cfg.log_file);
  cfg.socket_path = std::filesystem::absolute(cfg.socket_path);
  cfg.artifact_dir = std::filesystem::absolute(cfg.artifact_dir);
  if (!cfg.legacy_artifact_dir.empty()) cfg.legacy_artifact_dir = std::filesystem::absolute(cfg.legacy_artifact_dir);
  if (normalize_dir(cfg.legacy_artifact_dir) == normalize_dir(cfg.artifact_dir)) cfg.legacy_artifact_dir.clear();
  cfg.queue_dir = std::filesystem::absolute(cfg.queue_dir);
}

void validate(const config& cfg) {
  auto require = [](bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(what);
  };
  require(cfg.socket_path.native().size() < 108, "--socket: path must be shorter than 108 bytes");
  // Every cut result's footer names the artifact's path: a longer one would crowd out the
  // text of a cut at the floor (which a batch raises to fit its footers: engine/text/budget.hpp).
  require(cfg.artifact_dir.native().size() <= 200, "--artifact-dir: path must be at most 200 bytes");
  require(cfg.max_frame_bytes >= 4096, "--max-frame-bytes: at least 4096");
  require(cfg.max_depth >= 4 && cfg.max_depth <= 1024, "--max-depth: 4..1024");
  require(cfg.max_connections >= 1, "--max-connections: at least 1");
  require(cfg.max_outbox_bytes >= 64 * 1024, "--max-outbox-bytes: at least 65536");
  require(cfg.forget_after_ms >= 1 && cfg.forget_after_ms <= 30ULL * 24 * 3600 * 1000,
          "--forget-after-ms: 1..2592000000 (30 days)");
  require(cfg.workers >= 1 && cfg.workers <= 64, "--workers: 1..64");
  require(cfg.spin_us <= 10'000, "--spin-us: 0..10000");
  require(cfg.head_share >= 0.05 && cfg.head_share <= 0.95, "--head-share: 0.05..0.95");
  require(cfg.policy.headroom_share > 0 && cfg.policy.headroom_share <= 1, "--headroom-share: (0, 1]");
  require(cfg.policy.bytes_per_token >= 1, "--bytes-per-token: at least 1");
  for (const auto* caps : {&cfg.auto_caps, &cfg.wait_caps}) {
    require(caps->floor_bytes >= 512, "--*-floor-bytes: at least 512");
    require(caps->per_result_bytes >= caps->floor_bytes, "--*-result-bytes: at least the floor");
    require(caps->per_batch_bytes >= caps->per_result_bytes, "--*-batch-bytes: at least the per-result cap");
    require(caps->max_lines >= 8, "--*-max-lines: at least 8");
  }
  // A per-result cap must hold the longest marker and footer a cut result can get with this
  // store and CLI (a text of the largest frame, the longest save-failure reason): below it a
  // wait or delivery of such a result could not be cut at all.
  const std::size_t footer_need =
      least_cut_bytes(text_shape{cfg.max_frame_bytes, cfg.max_frame_bytes},
                      (cfg.artifact_dir / (sha256_placeholder() + ".txt")).string(), cfg.cli_path);
  for (const auto& [caps, flag] : {std::pair{&cfg.auto_caps, "--auto-result-bytes"}, std::pair{&cfg.wait_caps, "--wait-result-bytes"}})
    if (caps->per_result_bytes < footer_need)
      throw std::invalid_argument(std::string(flag) + ": at least " + std::to_string(footer_need) +
                                  " with this --artifact-dir and --cli-path (a cut result's marker and footer need that much)");
  require(cfg.idle_exit_ms <= 30ULL * 24 * 3600 * 1000, "--idle-exit-ms: 0..2592000000 (30 days)");
  require(cfg.gc_max_age_days >= 1 && cfg.gc_max_age_days <= 36500, "--gc-max-age-days: 1..36500");
  require(cfg.log_format == "text" || cfg.log_format == "json", "--log-format: text or json");
}

rpc::limits_dto limits_of(const config& cfg) {
  auto caps = [](const surface_caps& c) {
    return rpc::surface_limits{c.per_result_bytes, c.per_batch_bytes, c.floor_bytes, c.max_lines};
  };
  return {cfg.max_frame_bytes, cfg.max_depth, cfg.wire, preview_max_bytes, preview_max_lines,
          caps(cfg.auto_caps), caps(cfg.wait_caps), cfg.head_share};
}

}  // namespace handoff::daemon
