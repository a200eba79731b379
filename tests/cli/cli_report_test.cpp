// The `handoff` CLI's reporting subcommands against a real handoffd: started, progress,
// complete (binary-exact from stdin or a file), check, cancel, read and status, in human form
// and with --json parsed back.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "cli_process.hpp"
#include "engine/fs/sha256.hpp"
#include "support/daemon_process.hpp"
#include "support/fs_fixtures.hpp"
#include "support/raw_client.hpp"

using namespace handoff::test;
using nlohmann::json;

namespace {

// Runs `handoff --socket <d's socket> args...`, requiring exit status `expect`.
cli_result handoff_ok(const daemon_process& d, const std::vector<std::string>& args, std::string input = {},
                      int expect = 0) {
  cli_result r = run_cli(on_socket(d.socket().string(), args), std::move(input));
  INFO("handoff ", args.front(), " stderr: ", r.err);
  REQUIRE(r.status == expect);
  return r;
}

// Lines first..first+count-1 (1-based) of `text`, split on "\n" as Pi's read does.
std::string lines_of(const std::string& text, std::size_t first, std::size_t count) {
  std::size_t begin = 0;
  for (std::size_t line = 1; line < first; ++line) begin = text.find('\n', begin) + 1;
  std::size_t end = begin;
  for (std::size_t i = 0; i < count && end != std::string::npos; ++i) end = text.find('\n', end + (i ? 1 : 0));
  return text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

json json_of(const cli_result& r) {
  INFO("stdout: ", r.out);
  return json::parse(r.out);
}

}  // namespace

TEST_CASE("started, progress and check, in plain words and as JSON") {
  daemon_process d;
  CHECK(handoff_ok(d, {"started", "--parent", "p", "--child", "c1", "--title", "Refactor"}).out ==
        "child c1 of parent p: running\n");
  CHECK(json_of(handoff_ok(d, {"started", "--parent", "p", "--child", "c2", "--json"})) == json{{"state", "running"}});

  const cli_result progress = handoff_ok(d, {"progress", "--parent", "p", "--child", "c1", "step 3 of 5: editing"});
  CHECK(progress.out.empty());

  const std::string text = handoff_ok(d, {"check", "--parent", "p", "c1"}).out;
  CHECK(text.find("child c1 of parent p \"Refactor\": running") == 0);
  CHECK(text.find("step 3 of 5: editing") != std::string::npos);

  const json checked = json_of(handoff_ok(d, {"check", "--parent", "p", "c1", "--json"}));
  CHECK(checked["childId"] == "c1");
  CHECK(checked["title"] == "Refactor");
  CHECK(checked["state"] == "running");
  CHECK(checked["status"].is_null());
  CHECK(checked["preview"].get<std::string>().find("editing") != std::string::npos);
}

TEST_CASE("progress over the daemon's limit is a usage error, not a silent drop") {
  daemon_process d;
  const cli_result r = run_cli(on_socket(d.socket().string(),
                                         {"progress", "--parent", "p", "--child", "c", std::string(70 * 1024, 'x')}));
  CHECK(r.status == 2);
  CHECK(r.err.find("at most 65536") != std::string::npos);
}

TEST_CASE("complete from stdin is byte-exact: the artifact holds the very bytes, read pages them") {
  daemon_process d;
  // No final newline, CRLF, trailing blanks, CJK and emoji: nothing may be normalised.
  std::string text = numbered_report(30000, 300, "exact");
  text += "\r\n  trailing blanks  \n中文结论：可以合并 ✅ 🚀";
  const json done = json_of(handoff_ok(d, {"complete", "--parent", "p", "--child", "c", "--json"}, text));
  CHECK(done["sha256"] == handoff::sha256_hex(text));
  CHECK(done["bytes"] == text.size());
  CHECK(done["lines"] == 302);
  CHECK(done["duplicate"] == false);

  // The same again is a duplicate, said in plain words.
  const std::string again = handoff_ok(d, {"complete", "--parent", "p", "--child", "c", "-"}, text).out;
  CHECK(again.find("completed child c of parent p (done): " + std::to_string(text.size()) + " bytes, 302 lines") == 0);
  CHECK(again.find("duplicate") != std::string::npos);

  const json batch = json_of(handoff_ok(d, {"wait", "--parent", "p", "c", "--json"}));
  const json& section = batch["sections"][0];
  REQUIRE(section["truncated"] == true);
  CHECK(read_file(section["artifact"]["path"].get<std::string>()) == text);

  const std::size_t offset = section["omitted"]["offset"], limit = section["omitted"]["limit"];
  const std::string sha = section["artifact"]["sha256"];
  const cli_result page = handoff_ok(d, {"read", sha, "--offset", std::to_string(offset), "--limit", "2"});
  CHECK(page.out == lines_of(text, offset, 2));  // the lines' bytes, no newline added
  const json paged = json_of(handoff_ok(d, {"read", sha, "--offset", std::to_string(offset), "--limit",
                                            std::to_string(limit), "--json"}));
  CHECK(paged["text"] == lines_of(text, offset, limit));
  CHECK(paged["firstLine"] == offset);
  CHECK(paged["lastLine"] == offset + limit - 1);
  CHECK(paged["totalLines"] == 302);
  CHECK(paged["path"] == section["artifact"]["path"]);

  // The tail, past the last page: the CJK line arrives whole.
  const json tail = json_of(handoff_ok(d, {"read", sha, "--offset", "302", "--json"}));
  CHECK(tail["text"] == "中文结论：可以合并 ✅ 🚀");
  CHECK(tail["nextOffset"].is_null());
}

TEST_CASE("complete from a file with a title, status error and an error text, check reports them") {
  daemon_process d;
  temp_dir dir;
  write_file(dir / "final.txt", "partial work\nthen the build broke", 0600);
  handoff_ok(d, {"complete", "--parent", "p", "--child", "c", "--title", "Port the parser", "--status", "error",
                 "--error", "compiler crashed", (dir / "final.txt").string()});

  const std::string text = handoff_ok(d, {"check", "--parent", "p", "c"}).out;
  CHECK(text.find("child c of parent p \"Port the parser\": completed, status error, 33 bytes, 2 lines\n") == 0);
  CHECK(text.find("error: compiler crashed\n") != std::string::npos);
  CHECK(text.find("then the build broke") != std::string::npos);

  const json checked = json_of(handoff_ok(d, {"check", "--parent", "p", "c", "--json"}));
  CHECK(checked["state"] == "completed");
  CHECK(checked["status"] == "error");
  CHECK(checked["error"] == "compiler crashed");
  CHECK(checked["bytes"] == 33);
}

TEST_CASE("cancel: consumed results and unknown ids, in plain words and as JSON") {
  daemon_process d;
  handoff_ok(d, {"started", "--parent", "p", "--child", "running"});
  handoff_ok(d, {"complete", "--parent", "p", "--child", "done"}, "unwanted");
  CHECK(handoff_ok(d, {"cancel", "--parent", "p", "running", "ghost"}).out ==
        "cancelled: running\nnot known to handoffd: ghost\n0 completed results consumed\n");
  const json r = json_of(handoff_ok(d, {"cancel", "--parent", "p", "done", "--json"}));
  CHECK(r["cancelled"] == json::array({"done"}));
  CHECK(r["consumed"] == 1);
}

TEST_CASE("status: counts in plain words, --json is daemon/status's result") {
  daemon_process d;
  handoff_ok(d, {"started", "--parent", "p", "--child", "a"});
  handoff_ok(d, {"complete", "--parent", "p", "--child", "b"}, "result b");

  const std::string text = handoff_ok(d, {"status"}).out;
  CHECK(text.find("handoffd ") == 0);
  CHECK(text.find(" at " + d.socket().string() + ", up ") != std::string::npos);
  CHECK(text.find("children     1 running, 1 completed, 0 being delivered, 0 delivered\n") != std::string::npos);
  CHECK(text.find("waits        0 asleep\n") != std::string::npos);
  CHECK(text.find("queue        1 results (8 B of text)") != std::string::npos);
  CHECK(text.find("artifacts    " + d.artifact_dir().string()) != std::string::npos);

  const json s = json_of(handoff_ok(d, {"status", "--json"}));
  CHECK(s["children"]["running"] == 1);
  CHECK(s["waits"] == 0);
  CHECK(s["queue"]["results"] == 1);
  // The completion went to disk in a journal group: counted since the daemon started.
  CHECK(s["queue"]["groups"].get<int>() >= 1);
  CHECK(s["queue"]["changes"].get<int>() >= s["queue"]["groups"].get<int>());
  CHECK(s["store"]["dir"] == d.artifact_dir().string());
}
