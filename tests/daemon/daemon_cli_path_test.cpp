// The footer's bash commands against a real handoffd: they name the `handoff` CLI by an absolute
// path handoffd resolved (or was given with --cli-path), so a real shell runs them with no
// `handoff` on its PATH and prints the omitted bytes; a bad --cli-path is refused at start.
#include <doctest/doctest.h>

#include <cstdio>
#include <regex>
#include <sys/stat.h>
#include <unistd.h>

#include "support/daemon_process.hpp"
#include "support/raw_client.hpp"
#include "support/temp_dir.hpp"

using namespace handoff::test;
namespace fs = std::filesystem;

namespace {

struct shell_result {
  int status = -1;
  std::string out;
};

// Runs `command` in /bin/sh with an empty PATH, so only an absolute command name can run.
shell_result run_shell(const std::string& command) {
  shell_result r;
  FILE* pipe = ::popen(("PATH=/nonexistent; " + command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[65536];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) r.out.append(buffer, n);
  r.status = ::pclose(pipe);
  return r;
}

// A shell word in single quotes (the footer's quoting) back to the string.
std::string unquote(std::string word) {
  for (std::size_t at = 0; (at = word.find("'\\''", at)) != std::string::npos; ++at) word.replace(at, 4, "'");
  return word;
}

// The projection handoffd gives subagent/wait for `text`.
std::string projected(daemon_process& d, const std::string& text) {
  raw_client c(d.socket());
  json r = c.call("subagent/completed", {{"parentId", "p"}, {"childId", "c"}, {"status", "done"}, {"finalText", text}});
  REQUIRE_MESSAGE(r.contains("result"), r.dump());
  r = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"c"}}, {"timeoutMs", 5000}});
  REQUIRE_MESSAGE(r.contains("result"), r.dump());
  const json& section = r["result"]["sections"][0];
  REQUIRE(section["truncated"] == true);
  return section["text"].get<std::string>();
}

const std::string word = R"('((?:[^']|'\\'')*)')";

}  // namespace

TEST_CASE("by default the footer names the handoff CLI of the build tree, and a shell runs it off the PATH") {
  daemon_process d;
  // One line of 200,000 bytes: the footer lists `read --bytes` ranges.
  const std::string text(200000, 'x');
  const std::string footer = projected(d, text);
  std::smatch m;
  REQUIRE_MESSAGE(std::regex_search(footer, m, std::regex("bash `(" + word + R"( read --bytes (\d+)-(\d+) )" + word + ")`")),
                  footer.substr(footer.size() - std::min<std::size_t>(footer.size(), 600)));
  const fs::path cli = unquote(m[2].str());
  CHECK(cli.is_absolute());
  CHECK(::access(cli.c_str(), X_OK) == 0);
  // handoffd is build/daemon/handoffd: the CLI it found is build/client/handoff.
  CHECK(fs::equivalent(cli, HANDOFF_CLI_PATH));
  const std::size_t first = std::stoul(m[3].str());
  const std::size_t end = std::stoul(m[4].str());
  const shell_result r = run_shell(m[1].str());
  CHECK(r.status == 0);
  CHECK((r.out == text.substr(first, end - first)));
}

TEST_CASE("--cli-path names the CLI, however long, the plan command runs from a shell") {
  temp_dir tmp("handoff-cli-path");
  const fs::path dir = tmp.path() / std::string(120, 'd');
  fs::create_directories(dir);
  const fs::path link = dir / "my handoff";  // a space: the quoting must hold
  fs::create_symlink(fs::canonical(HANDOFF_CLI_PATH), link);
  daemon_process d({"--cli-path", link.string()});
  // Many pages of lines: the footer names the plan command instead of listing every call.
  std::string text;
  for (int i = 1; i <= 60000; ++i) text += "line " + std::to_string(i) + std::string(40, '.') + "\n";
  const std::string footer = projected(d, text);
  std::smatch m;
  REQUIRE_MESSAGE(std::regex_search(footer, m, std::regex("bash `(" + word + R"( read --plan (\d+)-(\d+) )" + word + ")`")),
                  footer.substr(footer.size() - std::min<std::size_t>(footer.size(), 600)));
  CHECK(unquote(m[2].str()) == link.string());
  const shell_result r = run_shell(m[1].str());
  CHECK(r.status == 0);
  CHECK(r.out.rfind("# The calls that read lines " + m[3].str() + "-" + m[4].str(), 0) == 0);
  CHECK(r.out.find("\nread offset=" + m[3].str() + " limit=") != std::string::npos);
}

TEST_CASE("a bad --cli-path is refused at start with the reason") {
  temp_dir tmp("handoff-cli-path-bad");
  const fs::path plain = tmp.path() / "plain";
  std::fclose(std::fopen(plain.c_str(), "w"));  // exists, not executable
  const std::string start = std::string("'") + HANDOFFD_PATH + "' --socket '" + (tmp.path() / "s.sock").string() +
                            "' --artifact-dir '" + (tmp.path() / "a").string() + "' --queue-dir '" +
                            (tmp.path() / "q").string() + "' --cli-path ";
  const std::string cli = fs::canonical(HANDOFF_CLI_PATH).string();
  const struct {
    std::string arg;
    std::string reason;
  } cases[] = {
      {"handoff", "must be an absolute path"},
      {"'" + (tmp.path() / "none").string() + "'", "is not an executable file"},
      {"'" + plain.string() + "'", "is not an executable file"},
      {"'" + tmp.path().string() + "'", "is not an executable file"},
      {"\"$(printf '" + cli + "\\nx')\"", "must not hold control characters"},
      {"\"" + cli + "'\\\"x\"", "must not hold control characters, quotes"},
      {"'/" + std::string(220, 'l') + "'", "must be at most 200 bytes"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.arg);
    const shell_result r = run_shell(start + c.arg);
    CHECK(WIFEXITED(r.status));
    CHECK(WEXITSTATUS(r.status) == 2);
    CHECK(r.out.find("--cli-path") != std::string::npos);
    CHECK(r.out.find(c.reason) != std::string::npos);
  }
}

TEST_CASE("a per-result cap too small for the footer this store and CLI need is refused at start") {
  temp_dir tmp("handoff-footer-room");
  fs::path deep = tmp.path();
  while (deep.string().size() < 160) deep /= "a-rather-long-directory-name";  // 160-189 bytes
  const std::string start = std::string("'") + HANDOFFD_PATH + "' --socket '" + (tmp.path() / "s.sock").string() +
                            "' --artifact-dir '" + deep.string() + "' --queue-dir '" + (tmp.path() / "q").string() +
                            "' --wait-floor-bytes 512 --wait-result-bytes ";
  const shell_result r = run_shell(start + "600");
  CHECK(WIFEXITED(r.status));
  CHECK(WEXITSTATUS(r.status) == 2);
  const std::regex need(R"(--wait-result-bytes: at least (\d+) with this --artifact-dir and --cli-path)");
  std::smatch m;
  REQUIRE_MESSAGE(std::regex_search(r.out, m, need), r.out);
  const std::size_t least = std::stoul(m[1]);
  CHECK(least > 600);
  CHECK(least < 2048);

  // At that cap it starts, and a long result waited for from a nearly full context is cut, not refused.
  daemon_process d({"--artifact-dir", deep.string(), "--wait-floor-bytes", "512", "--wait-result-bytes", std::to_string(least)});
  raw_client c(d.socket());
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "line " + std::to_string(i) + " of a long report\n";
  json reply = c.call("subagent/completed", {{"parentId", "p"}, {"childId", "c"}, {"status", "done"}, {"finalText", text}});
  REQUIRE_MESSAGE(reply.contains("result"), reply.dump());
  reply = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"c"}}, {"usage", {{"tokens", 199'990}, {"contextWindow", 200'000}, {"percent", 99.995}}}});
  REQUIRE_MESSAGE(reply.contains("result"), reply.dump());
  const json& section = reply["result"]["sections"][0];
  CHECK(section["truncated"] == true);
  CHECK(section["text"].get<std::string>().find(deep.string()) != std::string::npos);
  CHECK(reply["result"]["budget"]["floorBytes"].get<std::size_t>() > 512);
}
