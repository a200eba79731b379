// `handoff doctor [--artifact-dir DIR] [--queue-dir DIR]`
//
// Checks, in order, and prints one line each ("ok", "warn" or "FAIL", and the fix):
//   which socket, and why (--socket, HANDOFF_SOCKET, XDG_RUNTIME_DIR or the private fallback);
//   the socket's directory (ours, 0700) and the socket (present, a socket, ours, 0600);
//   that handoffd answers there (initialize, daemon/status) and its version matches ours;
//   the artifact store and the queue: directories ours and 0700, their files 0600;
//   free space on their filesystems (a warning under 1 GiB or 5%);
//   for each harness whose program is on the PATH, whether handoff is set up for it (ok or a
//   warning, never a failure: `handoff setup NAME --check`'s verdict).
// The directories are the ones the running daemon reports; when it does not answer, the
// options, else handoffd's defaults. Exit status 0 when nothing failed (warnings allowed),
// 1 otherwise.
#include "cli/doctor_command.hpp"

#include <CLI/CLI.hpp>
#include <sys/stat.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/doctor_checks.hpp"
#include "protocol/default_paths.hpp"
#include "protocol/socket_location.hpp"

namespace handoff::cli {
namespace {

namespace fs = std::filesystem;

struct doctor_options {
  std::string artifact_dir;  // --artifact-dir: when handoffd does not answer
  std::string queue_dir;     // --queue-dir: likewise
};

// The first of: an option, the daemon's report at `pointer`, the default.
fs::path pick_dir(const std::string& option, const std::optional<nlohmann::json>& status, const char* pointer,
                  const fs::path& fallback) {
  if (!option.empty()) return fs::absolute(option);
  if (status) {
    const nlohmann::json::json_pointer ptr(pointer);
    if (status->contains(ptr) && status->at(ptr).is_string()) return status->at(ptr).get<std::string>();
  }
  return fallback;
}

class doctor {
 public:
  void add(finding f) { findings_.push_back(std::move(f)); }

  // Asks the daemon at `socket` who it is; its daemon/status when it answers.
  std::optional<nlohmann::json> ask_daemon(const fs::path& socket) {
    try {
      client::options settings;
      settings.socket = socket;
      settings.call_timeout = std::chrono::seconds(10);
      client::connection c(settings);
      rpc::initialize_params hello;
      hello.client_name = "handoff-doctor";
      const rpc::initialize_result server = c.initialize(hello);
      nlohmann::json status = c.call(rpc::methods::daemon_status.name, nullptr);  // untyped: any daemon's
      add({finding::level::ok, "handoffd " + server.server_version + " answers (protocol " + server.protocol_version + ")"});
      if (server.server_version != HANDOFF_VERSION)
        add({finding::level::warn, "handoffd is version " + server.server_version + " but this handoff is " +
                                       HANDOFF_VERSION + ": restart it after an upgrade (systemctl --user restart "
                                       "handoffd.service)"});
      return status;
    } catch (const std::exception& e) {
      add({finding::level::fail, std::string("handoffd does not answer: ") + e.what() +
                                     " (see systemctl --user status handoffd.service and journalctl --user -u "
                                     "handoffd.service)"});
      return std::nullopt;
    }
  }

  void check_area(const fs::path& dir, const std::string& what, int depth, bool daemon_answered) {
    if (dir.empty()) {
      add({finding::level::fail, "cannot tell where the " + what + " is: HOME is not set; pass --" +
                                     (what == "artifact dir" ? "artifact-dir" : "queue-dir")});
      return;
    }
    add(check_private_dir(dir, what, !daemon_answered));
    struct stat st {};
    if (::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) add(check_private_contents(dir, what, depth));
  }

  int report() const {
    std::size_t failed = 0, warned = 0;
    std::string out;
    for (const finding& f : findings_) {
      const char* tag = f.severity == finding::level::ok ? "ok   " : f.severity == finding::level::warn ? "warn " : "FAIL ";
      out += tag + f.text + "\n";
      failed += f.severity == finding::level::fail;
      warned += f.severity == finding::level::warn;
    }
    if (failed == 0)
      out += warned == 0 ? "handoff is healthy\n" : "handoff works; " + std::to_string(warned) + " warning(s) above\n";
    else
      out += std::to_string(failed) + " problem(s) found: see the FAIL lines above\n";
    if (!print("doctor", out)) return exit_failure;
    return failed == 0 ? exit_ok : exit_failure;
  }

 private:
  std::vector<finding> findings_;
};

int run_doctor(const daemon_options& daemon, const doctor_options& options) {
  doctor d;
  // Which socket, and why: with several rules (socket_location.hpp) a wrong guess about which
  // one applies is the usual cause of "handoffd does not answer".
  fs::path socket = daemon.socket;
  std::string why = "given with --socket";
  if (socket.empty()) {
    const rpc::socket_location where = rpc::client_socket_location();
    why = rpc::client_reason(where.source);
    try {
      socket = client::default_socket_path();
    } catch (const std::exception& e) {
      d.add({finding::level::fail, e.what()});
    }
  }
  std::optional<nlohmann::json> status;
  if (!socket.empty()) {
    socket = fs::absolute(socket);
    d.add({finding::level::ok, "socket " + socket.string() + " (" + why + ")"});
    d.add(check_private_dir(socket.parent_path(), "socket dir", false));
    const finding socket_file = check_socket_file(socket);
    d.add(socket_file);
    if (socket_file.severity != finding::level::fail) status = d.ask_daemon(socket);
  }
  const fs::path artifacts = pick_dir(options.artifact_dir, status, "/store/dir", rpc::default_artifact_dir());
  const fs::path queue = pick_dir(options.queue_dir, status, "/queue/dir", rpc::default_queue_dir());
  d.check_area(artifacts, "artifact dir", 0, status.has_value());
  d.check_area(queue, "queue dir", 1, status.has_value());

  struct stat a {}, q {};
  if (!artifacts.empty()) d.add(check_free_space(artifacts, "the artifact dir"));
  const bool same_fs = ::stat(artifacts.c_str(), &a) == 0 && ::stat(queue.c_str(), &q) == 0 && a.st_dev == q.st_dev;
  if (!queue.empty() && !same_fs) d.add(check_free_space(queue, "the queue dir"));
  for (const harness& h : harnesses())
    if (std::optional<finding> setup = check_harness_setup(h)) d.add(std::move(*setup));
  return d.report();
}

}  // namespace

command add_doctor_command(CLI::App& app, std::shared_ptr<const daemon_options> daemon) {
  auto options = std::make_shared<doctor_options>();
  CLI::App* sub = add_daemon_subcommand(
      app, "doctor",
      "Check the socket, the daemon, directories, free space, and handoff's setup for each harness on the PATH");
  sub->add_option("--artifact-dir", options->artifact_dir, "The artifact store to check when handoffd does not answer");
  sub->add_option("--queue-dir", options->queue_dir, "The queue to check when handoffd does not answer");
  return command{sub, [daemon, options] { return run_doctor(*daemon, *options); }};
}

}  // namespace handoff::cli
