// `handoff wait` against a real handoffd: the batch printed exactly as the parent model reads
// it, --json parsed back, the usage flags, exit status 4 on a timeout with children pending,
// and Ctrl-C: nothing taken from a wait still asleep, an answer already written printed.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_process.hpp"
#include "support/daemon_process.hpp"
#include "support/raw_client.hpp"

using namespace handoff::test;
using nlohmann::json;

namespace {

cli_result handoff_run(const daemon_process& d, const std::vector<std::string>& args, std::string input = {}) {
  return run_cli(on_socket(d.socket().string(), args), std::move(input));
}

void complete(const daemon_process& d, const std::string& parent, const std::string& child, const std::string& text) {
  const cli_result r = handoff_run(d, {"complete", "--parent", parent, "--child", child}, text);
  INFO(r.err);
  REQUIRE(r.status == 0);
}

json json_of(const cli_result& r) {
  INFO("stdout: ", r.out, "\nstderr: ", r.err);
  return json::parse(r.out);
}

// Polls daemon/status until `pointer` reads `value`; false after 10 s.
bool status_reaches(const daemon_process& d, const char* pointer, int value) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < give_up) {
    const cli_result r = handoff_run(d, {"status", "--json"});
    if (r.status == 0 && json::parse(r.out).at(json::json_pointer(pointer)) == value) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // the poll interval
  }
  return false;
}

// Whether `pid` ignores `signo` (the SigIgn mask of /proc/PID/status).
bool signal_ignored(pid_t pid, int signo) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("SigIgn:")) return (std::stoull(line.substr(7), nullptr, 16) >> (signo - 1)) & 1;
  return false;
}

}  // namespace

TEST_CASE("wait prints the rendered batch and nothing else") {
  daemon_process d;
  // Two parents with the same results: one waits with --json, the other prints; the printed
  // bytes must be the JSON's `text`, exactly.
  const std::string long_text = numbered_report(50000, 500, "long");
  for (const std::string parent : {"p1", "p2"}) {
    complete(d, parent, "long", long_text);
    complete(d, parent, "short", "short result, no newline");
  }
  const cli_result as_json = handoff_run(d, {"wait", "--parent", "p1", "long", "short", "--json"});
  REQUIRE(as_json.status == 0);
  const json batch = json_of(as_json);
  CHECK(batch["timedOut"] == false);
  CHECK(batch["pending"] == json::array());
  CHECK(batch["sections"].size() == 2);
  CHECK(batch["budget"]["mode"] == "static");

  const cli_result printed = handoff_run(d, {"wait", "--parent", "p2", "long", "short"});
  CHECK(printed.status == 0);
  CHECK(printed.err.empty());
  CHECK(printed.out == batch["text"].get<std::string>());
  CHECK(printed.out.find("END long") != std::string::npos);  // the tail survived the cut
  CHECK(printed.out.find("short result, no newline") != std::string::npos);
}

TEST_CASE("wait --timeout-ms with children pending: the ready ones printed, exit 4") {
  daemon_process d;
  REQUIRE(handoff_run(d, {"started", "--parent", "p", "--child", "slow"}).status == 0);
  complete(d, "p", "fast", "fast result");

  const cli_result r = handoff_run(d, {"wait", "--parent", "p", "fast", "slow", "--timeout-ms", "200"});
  CHECK(r.status == 4);
  CHECK(r.out.find("fast result") != std::string::npos);
  CHECK(r.err == "handoff wait: timed out; still pending: slow\n");

  const cli_result again = handoff_run(d, {"wait", "--parent", "p", "slow", "--timeout-ms", "100", "--json"});
  CHECK(again.status == 4);
  const json j = json_of(again);
  CHECK(j["timedOut"] == true);
  CHECK(j["pending"] == json::array({"slow"}));
  CHECK(j["sections"] == json::array());
}

TEST_CASE("wait's usage flags: tokens and window give a dynamic budget, the window alone means unknown") {
  daemon_process d;
  complete(d, "p", "a", numbered_report(40000, 400, "a"));
  complete(d, "p", "b", numbered_report(40000, 400, "b"));

  const json dynamic = json_of(handoff_run(
      d, {"wait", "--parent", "p", "a", "--tokens", "195000", "--context-window", "200000", "--json"}));
  CHECK(dynamic["budget"]["mode"] == "dynamic");
  CHECK(dynamic["budget"]["usage"]["tokens"] == 195000);
  CHECK(dynamic["budget"]["usage"]["contextWindow"] == 200000);
  CHECK(dynamic["budget"]["usage"]["percent"] == doctest::Approx(97.5));
  CHECK(dynamic["budget"]["batchCapBytes"] < dynamic["budget"]["staticBatchBytes"]);

  const json unknown =
      json_of(handoff_run(d, {"wait", "--parent", "p", "b", "--context-window", "200000", "--json"}));
  CHECK(unknown["budget"]["mode"] == "static");
}

TEST_CASE("Ctrl-C while the wait is asleep: handoffd takes nothing, and the process ends by the signal") {
  daemon_process d;
  for (const int signo : {SIGINT, SIGTERM, SIGHUP}) {
    const std::string child = "by-signal-" + std::to_string(signo);
    REQUIRE(handoff_run(d, {"started", "--parent", "p", "--child", child}).status == 0);
    cli_process waiting(on_socket(d.socket().string(), {"wait", "--parent", "p", child}));
    REQUIRE(status_reaches(d, "/waits", 1));
    waiting.signal(signo);
    const cli_result r = waiting.finish();
    CHECK(r.status == -signo);  // killed by it, not exit(130): a shell script running it stops too
    CHECK(r.out.empty());
    CHECK(r.err == "handoff wait: interrupted: handoffd took nothing; the results stay queued for the next wait or "
                   "delivery\n");
    CHECK(status_reaches(d, "/waits", 0));

    // Nothing was taken: the child's result, once there, goes to the next wait.
    complete(d, "p", child, "result of " + child);
    const cli_result next = handoff_run(d, {"wait", "--parent", "p", child});
    CHECK(next.status == 0);
    CHECK(next.out.find("result of " + child) != std::string::npos);
  }
}

TEST_CASE("Ctrl-C after handoffd answered the wait: the consumed batch is printed, not lost") {
  daemon_process d;
  REQUIRE(handoff_run(d, {"started", "--parent", "p", "--child", "late"}).status == 0);
  cli_process waiting(on_socket(d.socket().string(), {"wait", "--parent", "p", "late"}));
  REQUIRE(status_reaches(d, "/waits", 1));
  // Stopped, the process cannot read: handoffd answers into its socket and consumes the result,
  // and the Ctrl-C is handled first when it resumes.
  waiting.signal(SIGSTOP);
  complete(d, "p", "late", "late result\nthe verdict is in the tail");
  REQUIRE(status_reaches(d, "/children/delivered", 1));
  waiting.signal(SIGINT);
  waiting.signal(SIGCONT);
  const cli_result r = waiting.finish();
  CHECK(r.status == -SIGINT);
  CHECK(r.out.find("the verdict is in the tail") != std::string::npos);
  CHECK(r.err == "handoff wait: interrupted, but handoffd had already answered: the batch above is complete\n");

  // It was consumed: printing it was its only chance.
  const cli_result again = handoff_run(d, {"wait", "--parent", "p", "late"});
  CHECK(again.out.find("the verdict") == std::string::npos);
  CHECK(again.err.find("already delivered earlier, not repeated: late") != std::string::npos);
}

TEST_CASE("a wait started with SIGINT ignored (a shell's background job) keeps ignoring it") {
  daemon_process d;
  REQUIRE(handoff_run(d, {"started", "--parent", "p", "--child", "bg"}).status == 0);
  cli_process waiting(on_socket(d.socket().string(), {"wait", "--parent", "p", "bg"}), {}, {}, {SIGINT});
  REQUIRE(status_reaches(d, "/waits", 1));
  // Ignored, not handled: the kernel drops a SIGINT sent now, so nothing can follow it later.
  CHECK(signal_ignored(waiting.pid(), SIGINT));
  waiting.signal(SIGINT);
  CHECK(status_reaches(d, "/waits", 1));  // still waiting
  waiting.signal(SIGTERM);
  const cli_result r = waiting.finish();
  CHECK(r.status == -SIGTERM);
  CHECK(r.err.find("interrupted: handoffd took nothing") != std::string::npos);
}
