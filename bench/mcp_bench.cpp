// `handoff mcp`'s own cost per tool call, as Codex pays it: one request line on the server's
// stdin, until its answer line is read back, against a bare MCP echo server in the same run
// (bench/mcp_echo.cpp), in alternating rounds, medians with their ratio. The call is
// subagent_list of a thread with ten subagents: the server's dispatch (a thread per call, the
// thread's state) and nothing of handoffd, which its other tools add as measured by the e2e
// benchmarks. Target <= 2x.
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/process.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

// One MCP server on pipes, spoken to a line at a time.
class mcp_server {
 public:
  mcp_server(std::vector<std::string> argv, std::vector<std::string> env) {
    handoff::test::process_spec spec;
    spec.argv = std::move(argv);
    spec.env = std::move(env);
    spec.in = handoff::test::stream::pipe;
    spec.out = handoff::test::stream::pipe;
    spec.err = handoff::test::stream::null;
    process_.emplace(std::move(spec));
    call("initialize", {{"protocolVersion", "2025-06-18"}, {"capabilities", nlohmann::json::object()}});
  }
  ~mcp_server() {
    process_->close_in();
    process_->wait(std::chrono::milliseconds(5000));
  }

  // Sends one request and reads its answer; returns the answer.
  nlohmann::json call(const std::string& method, const nlohmann::json& params) {
    const std::string line =
        nlohmann::json{{"jsonrpc", "2.0"}, {"id", ++id_}, {"method", method}, {"params", params}}.dump() + "\n";
    for (std::size_t done = 0; done < line.size();) {
      const ssize_t n = ::write(process_->in_fd(), line.data() + done, line.size() - done);
      if (n <= 0) throw std::runtime_error("the server's stdin closed");
      done += static_cast<std::size_t>(n);
    }
    for (;;) {
      const std::size_t newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        const std::string answer = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return nlohmann::json::parse(answer);
      }
      char chunk[65536];
      const ssize_t n = ::read(process_->out_fd(), chunk, sizeof chunk);
      if (n <= 0) throw std::runtime_error("the server's stdout closed");
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  // One tools/call, timed, microseconds.
  double timed_call(const nlohmann::json& params) {
    const auto start = clock_type::now();
    const nlohmann::json answer = call("tools/call", params);
    const double us = std::chrono::duration<double, std::micro>(clock_type::now() - start).count();
    if (!answer.contains("result")) throw std::runtime_error("a call failed: " + answer.dump());
    return us;
  }

 private:
  std::optional<handoff::test::process> process_;
  std::string buffer_;
  std::int64_t id_ = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"handoff mcp's cost per tool call against a bare MCP echo server"};
  std::string cli, echo;
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "handoff-mcp-bench";
  int rounds = 20;
  int calls = 200;
  app.add_option("--cli", cli, "the handoff CLI")->required();
  app.add_option("--echo", echo, "bench/mcp_echo")->required();
  app.add_option("--dir", dir, "the server's state directory goes here");
  app.add_option("--rounds", rounds, "rounds, alternating the two servers");
  app.add_option("--calls", calls, "calls per server per round");
  CLI11_PARSE(app, argc, argv);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string thread = "bench-thread-" + std::to_string(::getpid());
  // Ten subagents of the thread, as the server keeps them (children.hpp), so list has lines to write.
  nlohmann::json children = nlohmann::json::array();
  for (int i = 0; i < 10; ++i)
    children.push_back({{"id", "cx-00000" + std::to_string(i)}, {"title", "part " + std::to_string(i)}, {"cwd", "/"},
                        {"model", ""}, {"thread", ""},
                        {"turns", {{{"id", "cx-00000" + std::to_string(i)}, {"n", 1}, {"title", "part"},
                                    {"phase", "finished"}, {"status", "done"}, {"received", true}, {"reported", true}}}}});
  std::filesystem::create_directories(dir / "handoff" / "codex");
  {
    std::FILE* f = std::fopen((dir / "handoff" / "codex" / (thread + ".json")).c_str(), "w");
    const std::string text = nlohmann::json{{"children", children}}.dump();
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  mcp_server handoff_mcp({cli, "mcp"}, {"XDG_STATE_HOME=" + dir.string(), "HANDOFF_AUTOSTART=0",
                                        "HANDOFF_SOCKET=" + (dir / "none.sock").string()});
  mcp_server floor({echo}, {});
  const nlohmann::json list = {{"name", "subagent_list"},
                               {"arguments", nlohmann::json::object()},
                               {"_meta", {{"threadId", thread}}}};
  const nlohmann::json echo_call = {{"name", "echo"}, {"arguments", {{"text", std::string(600, 'x')}}},
                                    {"_meta", {{"threadId", thread}}}};
  std::vector<double> ours, theirs;
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < calls; ++i) theirs.push_back(floor.timed_call(echo_call));
    for (int i = 0; i < calls; ++i) ours.push_back(handoff_mcp.timed_call(list));
  }
  std::printf("| call | handoff mcp, median | bare echo server, median | ratio | target |\n|---|--:|--:|--:|--:|\n");
  std::printf("| tools/call subagent_list (10 subagents) | %.1f us | %.1f us | %.2fx | <= 2x |\n", median(ours),
              median(theirs), median(ours) / median(theirs));
  std::printf("\n%d rounds of %d calls each, alternating; the floor echoes a 600-byte argument (the list's size).\n",
              rounds, calls);
  return 0;
}
