// The Claude Code hook's wall time as Claude Code runs it: a new `handoff hook claude-code`
// process per call, its input on stdin, until it exits; against its floors in the same run
// (bench/hook_floor.cpp), in alternating rounds, medians reported with their ratios.
//   short   a 4 KiB Agent answer, no sibling: no daemon call. Floor: a trivial C++ program
//           started and reading its stdin. Target <= 2x.
//   long    a 171,016-byte answer, through a real handoffd: completed + one wait + the
//           projection. Floor: process start + SHA-256 + one fsync'd write of the text on the
//           same file system. Target <= 3x.
// And a background agent's report (client/cli/harness/claude_code/background.hpp), each hook as its own
// process: capture (SubagentStop), the gate (UserPromptSubmit, sync: the notice waits for it)
// and the deliverer (asyncRewake: runs beside the gate, the model waits for it), against the same
// floors: a short report (Claude Code's notice passes; no daemon call) and a 171 KB one (completed;
// then a wait, the projection and the spooled copy; then the copy handed over).
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_daemon.hpp"
#include "support/process.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

// Runs argv with `input` on stdin and its output to /dev/null; returns its wall time, microseconds.
double run_us(const std::vector<std::string>& argv, const std::string& input, const std::vector<std::string>& env,
              int expected = 0) {
  handoff::test::process_spec spec;
  spec.argv = argv;
  spec.env = env;
  spec.in = handoff::test::stream::pipe;
  spec.out = handoff::test::stream::null;
  spec.err = handoff::test::stream::null;  // the deliverer hands its copy over on stderr
  handoff::test::process p(std::move(spec));
  for (std::size_t done = 0; done < input.size();) {
    const ssize_t n = ::write(p.in_fd(), input.data() + done, input.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  p.close_in();
  const int status = p.wait();
  const double us = std::chrono::duration<double, std::micro>(clock_type::now() - p.started_at()).count();
  if (status != expected) throw std::runtime_error(argv[0] + " exited " + std::to_string(status));
  return us;
}

std::string answer(std::size_t lines, std::size_t width) {
  std::string out;
  for (std::size_t i = 1; i < lines; ++i) {
    char head[32];
    std::snprintf(head, sizeof head, "finding %04zu ", i);
    out += head;
    out.append(width - 14, 'x');
    out.push_back('\n');
  }
  out += "VERDICT: ship it";
  return out;
}

std::string hook_input(const std::string& session, const std::string& tool_use, const std::string& text) {
  nlohmann::json in = {
      {"session_id", session}, {"transcript_path", ""}, {"cwd", "/"}, {"hook_event_name", "PostToolUse"},
      {"tool_name", "Agent"}, {"tool_use_id", tool_use},
      {"tool_input", {{"description", "bench"}, {"prompt", "go"}, {"run_in_background", false}}},
      {"tool_response", {{"status", "completed"}, {"agentId", "a0"}, {"content", {{{"type", "text"}, {"text", text}}}}}}};
  return in.dump();
}

// SubagentStop of background agent `agent` whose final answer is `text`.
std::string stop_input(const std::string& session, const std::string& agent, const std::string& text) {
  nlohmann::json in = {{"session_id", session}, {"transcript_path", ""}, {"cwd", "/"}, {"hook_event_name", "SubagentStop"},
                       {"agent_id", agent}, {"agent_type", "general-purpose"}, {"last_assistant_message", text},
                       {"background_tasks", {{{"id", agent}, {"type", "subagent"}, {"status", "running"}, {"description", "bench"}}}}};
  return in.dump();
}

// The UserPromptSubmit of that agent's notice, its report as Claude Code shows it (the first and
// last 50,000 characters of a longer one).
std::string notice_input(const std::string& session, const std::string& agent, const std::string& text) {
  std::string shown = text;
  if (text.size() > 100'000)
    shown = text.substr(0, 50'000) + "\n... [" + std::to_string(text.size() - 100'000) + " characters truncated] ...\n" +
            text.substr(text.size() - 50'000);
  const std::string prompt = "<task-notification>\n<task-id>" + agent + "</task-id>\n<tool-use-id>toolu_1</tool-use-id>\n"
                             "<status>completed</status>\n<summary>Agent \"bench\" finished</summary>\n<result>" +
                             shown + "</result>\n<usage></usage>\n</task-notification>";
  nlohmann::json in = {{"session_id", session}, {"transcript_path", ""}, {"cwd", "/"},
                       {"hook_event_name", "UserPromptSubmit"}, {"prompt", prompt}};
  return in.dump();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The Claude Code hook's wall time against its floors"};
  std::string cli, floor_program, handoffd = HANDOFF_BENCH_HANDOFFD;
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "handoff-hook-bench";
  int rounds = 30;
  app.add_option("--cli", cli, "the handoff CLI")->required();
  app.add_option("--floor", floor_program, "bench/hook_floor")->required();
  app.add_option("--dir", dir, "where the daemon's store and the floor's file go");
  app.add_option("--rounds", rounds, "rounds of each case");
  CLI11_PARSE(app, argc, argv);
  std::filesystem::create_directories(dir);
  handoff::bench::bench_daemon daemon(handoffd, dir);
  const std::vector<std::string> env = {"HANDOFF_SOCKET=" + daemon.socket().string()};
  const std::string short_text = answer(64, 64);
  const std::string long_text = answer(3001, 57);
  std::vector<double> floor_short, hook_short, floor_long, hook_long;
  const std::string floor_file = (dir / "floor.txt").string();
  for (int r = 0; r < rounds; ++r) {
    const std::string session = "bench-" + std::to_string(::getpid()) + "-" + std::to_string(r);
    floor_short.push_back(run_us({floor_program}, short_text, {}));
    hook_short.push_back(run_us({cli, "hook", "claude-code"}, hook_input(session, "s", short_text), env));
    floor_long.push_back(run_us({floor_program, floor_file}, long_text, {}));
    hook_long.push_back(run_us({cli, "hook", "claude-code"}, hook_input(session, "l", long_text + std::to_string(r)), env));
  }
  std::printf("| case | hook, median | floor, median | ratio | target |\n|---|--:|--:|--:|--:|\n");
  std::printf("| short answer (4 KiB, no daemon call) | %.0f us | %.0f us | %.2fx | <= 2x |\n", median(hook_short),
              median(floor_short), median(hook_short) / median(floor_short));
  std::printf("| 171 KB answer (completed + wait + projection) | %.0f us | %.0f us | %.2fx | <= 3x |\n", median(hook_long),
              median(floor_long), median(hook_long) / median(floor_long));
  std::printf("\n%d rounds, alternating; floors: a trivial C++ program reading stdin, and the same plus SHA-256 and "
              "one fsync'd write of the text.\n", rounds);

  // A background agent's report: capture, gate, deliverer, each against the same floors.
  std::vector<std::string> bg_env = env;
  bg_env.push_back("XDG_STATE_HOME=" + (dir / "state").string());
  bg_env.push_back("CLAUDE_CODE_SESSION_ATTENDED=1");
  std::vector<double> cap_short, gate_short, del_short, cap_long, gate_long, del_long, fl_short, fl_long;
  for (int r = 0; r < rounds; ++r) {
    const std::string session = "bg-" + std::to_string(::getpid()) + "-" + std::to_string(r);
    const std::string long_r = long_text + std::to_string(r);
    fl_short.push_back(run_us({floor_program}, short_text, {}));
    cap_short.push_back(run_us({cli, "hook", "claude-code"}, stop_input(session, "as", short_text), bg_env));
    gate_short.push_back(run_us({cli, "hook", "claude-code"}, notice_input(session, "as", short_text), bg_env));
    del_short.push_back(run_us({cli, "hook", "claude-code", "--deliver"}, notice_input(session, "as", short_text), bg_env));
    fl_long.push_back(run_us({floor_program, floor_file}, long_r, {}));
    cap_long.push_back(run_us({cli, "hook", "claude-code"}, stop_input(session, "al", long_r), bg_env));
    gate_long.push_back(run_us({cli, "hook", "claude-code"}, notice_input(session, "al", long_r), bg_env));
    del_long.push_back(run_us({cli, "hook", "claude-code", "--deliver"}, notice_input(session, "al", long_r), bg_env, 2));
  }
  std::printf("\n| background report | hook | median | floor, median | ratio | target |\n|---|---|--:|--:|--:|--:|\n");
  const auto row = [](const char* what, const char* hook, const std::vector<double>& v, const std::vector<double>& f,
                      const char* target) {
    std::printf("| %s | %s | %.0f us | %.0f us | %.2fx | %s |\n", what, hook, median(v), median(f), median(v) / median(f), target);
  };
  row("short (4 KiB)", "capture (SubagentStop)", cap_short, fl_short, "<= 2x");
  row("short (4 KiB)", "gate (UserPromptSubmit)", gate_short, fl_short, "<= 2x");
  row("short (4 KiB)", "deliverer (asyncRewake)", del_short, fl_short, "<= 2x");
  row("171 KB", "capture: completed", cap_long, fl_long, "<= 3x");
  row("171 KB", "gate: wait + projection + spooled copy", gate_long, fl_long, "<= 3x");
  row("171 KB", "deliverer: the copy handed over", del_long, fl_long, "<= 3x");
  std::printf("\nEach hook a process of its own, as Claude Code runs it; the notice waits for the gate, the "
              "deliverer runs beside it.\n");
  return 0;
}
