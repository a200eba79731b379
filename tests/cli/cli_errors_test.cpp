// The `handoff` CLI's failures and help: exit 3 with a clear message when no daemon runs, exit 2
// on bad arguments, exit 1 when the daemon refuses, and --help on every subcommand.
#include <doctest/doctest.h>

#include <unistd.h>

#include <string>

#include <nlohmann/json.hpp>

#include "cli_process.hpp"
#include "support/daemon_process.hpp"
#include "support/temp_dir.hpp"

using namespace handoff::test;
using nlohmann::json;

namespace {

// One valid invocation of every subcommand that talks to handoffd.
const std::vector<std::vector<std::string>> daemon_subcommands = {
    {"status"},
    {"started", "--parent", "p", "--child", "c"},
    {"progress", "--parent", "p", "--child", "c", "working"},
    {"complete", "--parent", "p", "--child", "c"},
    {"wait", "--parent", "p", "c", "--timeout-ms", "10"},
    {"check", "--parent", "p", "c"},
    {"cancel", "--parent", "p", "c"},
    {"read", std::string(64, 'a')},
    {"watch", "--parent", "p", "--once"},
};

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("no daemon at the socket: every subcommand says so and how to start it, exit 3") {
  temp_dir dir;
  const std::string socket = (dir / "handoffd.sock").string();
  for (const auto& args : daemon_subcommands) {
    const cli_result r = run_cli(on_socket(socket, args), "final text");
    INFO("handoff ", args.front(), ": ", r.err);
    CHECK(r.status == 3);
    CHECK(r.out.empty());
    CHECK(r.err == "handoff " + args.front() + ": handoffd is not running at " + socket +
                       " (No such file or directory); start it with: handoffd --socket " + socket + "\n");
  }
}

TEST_CASE("the socket from --socket after the subcommand, or from $HANDOFF_SOCKET") {
  daemon_process d;
  const cli_result after = run_cli({"status", "--json", "--socket", d.socket().string()});
  CHECK(after.status == 0);
  CHECK(json::parse(after.out)["queue"]["results"] == 0);

  const cli_result from_env = run_cli({"status", "--json"}, {}, {"HANDOFF_SOCKET=" + d.socket().string()});
  CHECK(from_env.status == 0);
  CHECK(json::parse(from_env.out).contains("uptimeMs"));

  // Neither: the private fallback in TMPDIR (tests/cli/cli_socket_fallback_test.cpp has more).
  temp_dir tmp;
  const std::string fallback = (tmp / ("handoff-" + std::to_string(::geteuid())) / "handoffd.sock").string();
  const cli_result nothing = run_cli({"status"}, {}, {"HANDOFF_SOCKET", "XDG_RUNTIME_DIR", "TMPDIR=" + tmp.path().string()});
  CHECK(nothing.status == 3);
  CHECK_MESSAGE(contains(nothing.err, "handoffd is not running at " + fallback), nothing.err);
}

TEST_CASE("bad arguments are usage errors: exit 2, nothing sent") {
  daemon_process d;
  const std::vector<std::vector<std::string>> bad = {
      {"status", "--bogus"},
      {"started", "--parent", "p"},                                   // --child missing
      {"complete", "--parent", "p", "--child", "c", "--status", "maybe"},
      {"wait", "--parent", "p"},                                      // no child
      {"check", "--parent", "p"},                                     // no child
      {"check", "--parent", "p", "c1", "c2"},                         // check shows one child
      {"check", "--parent", "p", "--child", "c"},                     // the child is positional
      {"wait", "--parent", "p", "c", "--tokens", "5"},                // --tokens needs --context-window
      {"wait", "--parent", "p", "c", "--timeout-ms", "-1"},
      {"read", "not-a-sha256"},
      {"read", std::string(64, 'a'), "--offset", "0"},
      {"watch", "--parent", "p", "--no-usage", "--context-window", "1000"},
      {"frobnicate"},
  };
  for (const auto& args : bad) {
    const cli_result r = run_cli(on_socket(d.socket().string(), args));
    INFO("handoff ", args.front(), " ", (args.size() > 1 ? args[1] : ""), ": ", r.err);
    CHECK(r.status == 2);
    CHECK_FALSE(r.err.empty());
  }
  std::vector<std::string> too_many = {"cancel", "--parent", "p"};
  for (int i = 0; i < 65; ++i) too_many.push_back("c" + std::to_string(i));
  CHECK(run_cli(on_socket(d.socket().string(), too_many)).status == 2);
  CHECK(json::parse(run_cli(on_socket(d.socket().string(), {"status", "--json"})).out)["parents"] == 0);
}

TEST_CASE("the daemon's refusal: exit 1 with its message and code") {
  daemon_process d;
  const cli_result r = run_cli(on_socket(d.socket().string(), {"check", "--parent", "nobody", "c"}));
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(contains(r.err, "handoff check: unknown parent 'nobody'"));
  CHECK(contains(r.err, "(JSON-RPC error -32001)"));
}

TEST_CASE("a final text that is not UTF-8 is refused whole, not altered: exit 1") {
  daemon_process d;
  const cli_result r =
      run_cli(on_socket(d.socket().string(), {"complete", "--parent", "p", "--child", "c"}), "caf\xe9 latin-1");
  CHECK(r.status == 1);
  CHECK(contains(r.err, "not valid UTF-8"));
  CHECK(json::parse(run_cli(on_socket(d.socket().string(), {"status", "--json"})).out)["queue"]["results"] == 0);
}

TEST_CASE("--help: the top level lists the exit statuses, every subcommand explains its options") {
  const cli_result top = run_cli({"--help"});
  CHECK(top.status == 0);
  CHECK(contains(top.out, "3  handoffd is not running at the socket"));
  CHECK(contains(top.out, "4  wait: --timeout-ms passed with children still pending"));
  for (const auto& args : daemon_subcommands) {
    const cli_result r = run_cli({args.front(), "--help"});
    INFO("handoff ", args.front(), " --help");
    CHECK(r.status == 0);
    CHECK(contains(r.out, "Usage:"));
    if (args.front() != "status" && args.front() != "read") CHECK(contains(r.out, "--parent"));
    if (args.front() != "progress") CHECK(contains(r.out, "--json"));
  }
  CHECK(contains(run_cli({"wait", "--help"}).out, "--timeout-ms"));
  CHECK(contains(run_cli({"watch", "--help"}).out, "--once"));
  CHECK(contains(run_cli({"read", "--help"}).out, "--offset"));
  // The parent's questions take their children the same way: positional, after --parent.
  CHECK(contains(top.out, "what the parent asks (wait, check, cancel) lists the children after --parent P"));
  for (const std::string name : {"wait", "check", "cancel"}) {
    const std::string help = run_cli({name, "--help"}).out;
    INFO("handoff ", name, " --help");
    CHECK(contains(help, "Positionals:"));
    CHECK_FALSE(contains(help, "--child TEXT"));  // an option of started, progress, complete
  }
}
