// subagent/wait against a real handoffd: the seed's smoke without a model.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include "engine/fs/sha256.hpp"
#include "engine/text/reader_profile.hpp"
#include "support/daemon_process.hpp"
#include "support/raw_client.hpp"

using namespace handoff::test;

namespace {

json complete(raw_client& c, const std::string& parent, const std::string& child, const std::string& text,
              const std::string& status = "done") {
  json r = c.call("subagent/completed", {{"parentId", parent}, {"childId", child}, {"title", "task " + child},
                                         {"status", status}, {"finalText", text}});
  REQUIRE_MESSAGE(r.contains("result"), r.dump());
  return r["result"];
}

void check_artifact(const json& section, const std::string& full_text) {
  REQUIRE(section["artifact"].is_object());
  CHECK(section["artifact"]["saved"] == true);
  std::filesystem::path path = section["artifact"]["path"].get<std::string>();
  std::string sha = section["artifact"]["sha256"];
  CHECK(path.filename().string() == sha + ".txt");
  CHECK(file_sha256(path) == sha);
  CHECK(handoff::sha256_hex(full_text) == sha);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
}

}  // namespace

TEST_CASE("wait on 4 children of 21,333 bytes / 262 lines returns one batch under 48 KiB with heads and tails") {
  daemon_process d;
  raw_client c(d.socket());
  REQUIRE(c.call("initialize", {{"clientName", "test"}})["result"]["protocolVersion"] == "1");
  std::vector<std::string> texts;
  for (int i = 0; i < 4; ++i) {
    std::string child = "c" + std::to_string(i);
    CHECK(c.call("subagent/started", {{"parentId", "p"}, {"childId", child}, {"title", "task " + child}})
              ["result"]["state"] == "running");
    texts.push_back(numbered_report(21333, 262, child));
    REQUIRE(texts.back().size() == 21333);
  }
  for (int i = 0; i < 4; ++i) complete(c, "p", "c" + std::to_string(i), texts[i]);

  json r = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"c0", "c1", "c2", "c3"}}, {"timeoutMs", 5000}});
  REQUIRE_MESSAGE(r.contains("result"), r.dump());
  json res = r["result"];
  CHECK(res["timedOut"] == false);
  CHECK(res["deferred"] == 0);
  std::string text = res["text"];
  CHECK(text.size() <= 48 * 1024);
  REQUIRE(res["sections"].size() == 4);
  for (int i = 0; i < 4; ++i) {
    const json& s = res["sections"][i];
    std::string child = "c" + std::to_string(i);
    CHECK(s["childId"] == child);
    CHECK(s["truncated"] == true);
    CHECK(s["totalBytes"] == 21333);
    CHECK(s["totalLines"] == 262);
    std::string shown = s["text"];
    CHECK(shown.find("BEGIN " + child) != std::string::npos);
    CHECK(shown.find("END " + child) != std::string::npos);
    CHECK(shown.find("omitted") != std::string::npos);
    CHECK(text.find("BEGIN " + child) != std::string::npos);
    CHECK(text.find("END " + child) != std::string::npos);
    check_artifact(s, texts[i]);
  }
  // Consumed by the wait: a second wait finds nothing new to deliver.
  json again = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"c0"}}, {"timeoutMs", 100}});
  CHECK(again["result"]["sections"].empty());
  json chk = c.call("subagent/check", {{"parentId", "p"}, {"childId", "c0"}});
  CHECK(chk["result"]["state"] == "delivered");
}

TEST_CASE("a 422-line 36,997-byte result under the 16 KiB wait cap keeps BEGIN and END") {
  daemon_process d;
  raw_client c(d.socket(), raw_client::framing::content_length);
  std::string text = numbered_report(36997, 422, "solo");
  complete(c, "p", "solo", text);
  json res = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"solo"}}})["result"];
  REQUIRE(res["sections"].size() == 1);
  const json& s = res["sections"][0];
  std::string shown = s["text"];
  CHECK(shown.size() <= 16 * 1024);
  CHECK(shown.find("BEGIN solo") != std::string::npos);
  CHECK(shown.find("END solo") != std::string::npos);
  check_artifact(s, text);
  // The footer's read call pages the omitted middle back out of the artifact.
  std::size_t offset = s["omitted"]["offset"], limit = s["omitted"]["limit"];
  json page = c.call("artifact/read", {{"sha256", s["artifact"]["sha256"]}, {"offset", offset}, {"limit", limit}})["result"];
  CHECK(page["firstLine"] == offset);
  CHECK(page["lastLine"] == offset + limit - 1);
  CHECK(text.find(page["text"].get<std::string>()) != std::string::npos);
}

TEST_CASE("a short result comes back byte for byte and creates no artifact") {
  daemon_process d;
  raw_client c(d.socket());
  std::string text = "verdict: ok\nchanged: a.cpp\n";
  complete(c, "p", "short", text);
  json s = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"short"}}})["result"]["sections"][0];
  CHECK(s["text"] == text);
  CHECK(s["truncated"] == false);
  CHECK(std::filesystem::is_empty(d.artifact_dir()));
}

TEST_CASE("wait returns when the children complete, and times out with what it has") {
  daemon_process d;
  raw_client waiter(d.socket()), worker(d.socket());
  worker.call("subagent/started", {{"parentId", "p"}, {"childId", "a"}});
  worker.call("subagent/started", {{"parentId", "p"}, {"childId", "b"}});
  complete(worker, "p", "a", "result a");
  json r = waiter.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"a", "b"}}, {"timeoutMs", 300}})["result"];
  CHECK(r["timedOut"] == true);
  CHECK(r["pending"] == json::array({"b"}));
  REQUIRE(r["sections"].size() == 1);
  CHECK(r["sections"][0]["text"] == "result a");

  // A wait in progress is woken by the completion arriving on another connection.
  waiter.send({{"jsonrpc", "2.0"}, {"id", 77}, {"method", "subagent/wait"},
               {"params", {{"parentId", "p"}, {"childIds", {"b"}}, {"timeoutMs", 10000}}}});
  complete(worker, "p", "b", "result b", "error");
  json w = waiter.read();
  CHECK(w["id"] == 77);
  CHECK(w["result"]["timedOut"] == false);
  CHECK(w["result"]["sections"][0]["status"] == "error");
  CHECK(w["result"]["text"].get<std::string>().find("failed.") != std::string::npos);
}

TEST_CASE("unknown parents and children get their own errors") {
  daemon_process d;
  raw_client c(d.socket());
  CHECK(c.call("subagent/wait", {{"parentId", "nobody"}, {"childIds", {"x"}}})["error"]["code"] == -32001);
  c.call("subagent/started", {{"parentId", "p"}, {"childId", "a"}});
  json e = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"a", "ghost"}}})["error"];
  CHECK(e["code"] == -32002);
  CHECK(e["message"].get<std::string>().find("ghost") != std::string::npos);
  CHECK(c.call("subagent/check", {{"parentId", "p"}, {"childId", "ghost"}})["error"]["code"] == -32002);
}

TEST_CASE("completed is idempotent per parent and child, a different text conflicts") {
  daemon_process d;
  raw_client c(d.socket());
  json first = complete(c, "p", "a", "same text");
  CHECK(first["duplicate"] == false);
  json again = complete(c, "p", "a", "same text");
  CHECK(again["duplicate"] == true);
  CHECK(again["sha256"] == first["sha256"]);
  json clash = c.call("subagent/completed", {{"parentId", "p"}, {"childId", "a"}, {"status", "done"},
                                             {"finalText", "other text"}});
  CHECK(clash["error"]["code"] == -32006);
  json res = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"a"}}})["result"];
  CHECK(res["sections"].size() == 1);
}

TEST_CASE("check previews running progress and the end of a completed result") {
  daemon_process d;
  raw_client c(d.socket());
  c.call("subagent/started", {{"parentId", "p"}, {"childId", "a"}, {"title", "Audit"}});
  for (int i = 0; i < 40; ++i) c.notify("subagent/progress", {{"parentId", "p"}, {"childId", "a"}, {"text", "step " + std::to_string(i)}});
  json chk = c.call("subagent/check", {{"parentId", "p"}, {"childId", "a"}})["result"];
  CHECK(chk["state"] == "running");
  CHECK(chk["title"] == "Audit");
  std::string preview = chk["preview"];
  CHECK(preview.find("step 39") != std::string::npos);
  CHECK(preview.find("step 10\n") == std::string::npos);
  CHECK(std::count(preview.begin(), preview.end(), '\n') < 20);
  std::string text = numbered_report(10000, 100, "x");
  complete(c, "p", "a", text);
  chk = c.call("subagent/check", {{"parentId", "p"}, {"childId", "a"}})["result"];
  CHECK(chk["state"] == "completed");
  CHECK(chk["bytes"] == 10000);
  CHECK(chk["previewTruncated"] == true);
  CHECK(chk["preview"].get<std::string>().size() <= 2048);
  CHECK(chk["preview"].get<std::string>().find("END x") != std::string::npos);
}

TEST_CASE("cancel consumes completed results and they are not delivered") {
  daemon_process d;
  raw_client c(d.socket());
  complete(c, "p", "a", "text a");
  c.call("subagent/started", {{"parentId", "p"}, {"childId", "b"}});
  json r = c.call("subagent/cancel", {{"parentId", "p"}, {"childIds", {"a", "b"}}})["result"];
  CHECK(r["consumed"] == 1);
  CHECK(r["cancelled"].size() == 2);
  json w = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"a", "b"}}, {"timeoutMs", 100}})["result"];
  CHECK(w["sections"].empty());
  json st = c.call("daemon/status", nullptr)["result"];
  CHECK(st["queue"]["results"] == 0);
}

TEST_CASE("$/cancelRequest ends a wait still asleep with -32800 and takes nothing, an answered one is not undone") {
  daemon_process d;
  raw_client waiter(d.socket()), worker(d.socket());
  worker.call("subagent/started", {{"parentId", "p"}, {"childId", "slow"}});
  worker.call("subagent/started", {{"parentId", "p"}, {"childId", "other"}});

  // Asleep until "slow" settles: cancelled by its id (a string id here), answered at once.
  waiter.send({{"jsonrpc", "2.0"}, {"id", "w-1"}, {"method", "subagent/wait"},
               {"params", {{"parentId", "p"}, {"childIds", {"slow"}}}}});
  // Ids that name nothing of this connection are ignored: no reply, no effect.
  waiter.notify("$/cancelRequest", {{"id", "w-0"}});
  waiter.notify("$/cancelRequest", {{"id", 12345}});
  // The wait is registered once its request was read; a status call on the same connection
  // comes back after that.
  REQUIRE(waiter.call("daemon/status", nullptr).contains("result"));
  const auto asked = std::chrono::steady_clock::now();
  waiter.notify("$/cancelRequest", {{"id", "w-1"}});
  const json cancelled = waiter.read(std::chrono::seconds(5));
  CHECK(std::chrono::steady_clock::now() - asked < std::chrono::seconds(2));
  CHECK(cancelled["id"] == "w-1");
  REQUIRE_MESSAGE(cancelled.contains("error"), cancelled.dump());
  CHECK(cancelled["error"]["code"] == -32800);
  CHECK(cancelled["error"]["message"].get<std::string>().find("stay pending") != std::string::npos);

  // Nothing was taken: the result completed afterwards is still held and a new wait gets it.
  complete(worker, "p", "slow", "the slow result");
  CHECK(worker.call("daemon/status", nullptr)["result"]["queue"]["results"] == 1);
  json again = waiter.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"slow"}}, {"timeoutMs", 5000}});
  REQUIRE_MESSAGE(again.contains("result"), again.dump());
  REQUIRE(again["result"]["sections"].size() == 1);
  CHECK(again["result"]["sections"][0]["text"] == "the slow result");

  // A cancel that arrives after the answer was written changes nothing: the client must still
  // read that answer (it carries the results, consumed).
  complete(worker, "p", "other", "the other result");
  waiter.send({{"jsonrpc", "2.0"}, {"id", 9}, {"method", "subagent/wait"},
               {"params", {{"parentId", "p"}, {"childIds", {"other"}}}}});
  const json answered = waiter.read(std::chrono::seconds(5));
  waiter.notify("$/cancelRequest", {{"id", 9}});
  CHECK(answered["id"] == 9);
  REQUIRE_MESSAGE(answered.contains("result"), answered.dump());
  CHECK(answered["result"]["sections"][0]["text"] == "the other result");
  CHECK(!waiter.read_frame(std::chrono::milliseconds(300)).has_value());  // no second reply
  CHECK(worker.call("daemon/status", nullptr)["result"]["queue"]["results"] == 0);
}

TEST_CASE("$/cancelRequest with a bad id: a notification is dropped, a request gets -32602") {
  daemon_process d;
  raw_client c(d.socket());
  c.notify("$/cancelRequest", {{"id", json::array({1})}});
  c.notify("$/cancelRequest", {{"nothing", 1}});
  const json bad = c.call("$/cancelRequest", {{"id", true}});
  REQUIRE_MESSAGE(bad.contains("error"), bad.dump());
  CHECK(bad["error"]["code"] == -32602);
  CHECK(bad["error"]["message"].get<std::string>().find("id: expected a string or an integer") != std::string::npos);
  const json missing = c.call("$/cancelRequest", json::object());
  CHECK(missing["error"]["code"] == -32602);
  // As a request with a good id it is answered (null), like any other.
  const json fine = c.call("$/cancelRequest", {{"id", 1}});
  CHECK(fine.contains("result"));
  CHECK(c.call("daemon/status", nullptr).contains("result"));  // the connection is fine
}

TEST_CASE("$/cancelRequest in the same write as its wait still cancels it") {
  daemon_process d;
  raw_client waiter(d.socket()), worker(d.socket());
  worker.call("subagent/started", {{"parentId", "p"}, {"childId", "c"}});
  const json wait = {{"jsonrpc", "2.0"}, {"id", 5}, {"method", "subagent/wait"},
                     {"params", {{"parentId", "p"}, {"childIds", {"c"}}}}};
  const json cancel = {{"jsonrpc", "2.0"}, {"method", "$/cancelRequest"}, {"params", {{"id", 5}}}};
  waiter.send_raw(wait.dump() + "\n" + cancel.dump() + "\n");
  const json r = waiter.read(std::chrono::seconds(5));
  CHECK(r["id"] == 5);
  REQUIRE_MESSAGE(r.contains("error"), r.dump());
  CHECK(r["error"]["code"] == -32800);
  // The early cancel is spent: the same id on a new wait is not cancelled by it.
  waiter.send(wait);
  complete(worker, "p", "c", "done now");
  const json answered = waiter.read(std::chrono::seconds(5));
  REQUIRE_MESSAGE(answered.contains("result"), answered.dump());
  CHECK(answered["result"]["sections"][0]["text"] == "done now");
}

TEST_CASE("withReady: the batch also takes the parent's other completed children, under one budget, running and listed ones stay") {
  daemon_process d;
  raw_client c(d.socket());
  std::vector<std::string> texts;
  for (int i = 0; i < 3; ++i) texts.push_back(numbered_report(40000, 500, "r" + std::to_string(i)));
  complete(c, "p", "r0", texts[0]);
  complete(c, "p", "r1", texts[1]);
  complete(c, "p", "r2", texts[2]);
  REQUIRE(c.call("subagent/started", {{"parentId", "p"}, {"childId", "running"}})["result"]["state"] == "running");
  complete(c, "other", "x", texts[0]);  // another parent's child is never taken

  json r = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"r1"}}, {"timeoutMs", 0}, {"withReady", true}});
  REQUIRE_MESSAGE(r.contains("result"), r.dump());
  const json& res = r["result"];
  REQUIRE(res["sections"].size() == 3);
  // Completion order, each cut, all within one batch cap.
  CHECK(res["sections"][0]["childId"] == "r0");
  CHECK(res["sections"][1]["childId"] == "r1");
  CHECK(res["sections"][2]["childId"] == "r2");
  CHECK(res["text"].get<std::string>().size() <= 48 * 1024);
  for (int i = 0; i < 3; ++i) {
    CHECK(res["sections"][i]["truncated"] == true);
    check_artifact(res["sections"][i], texts[i]);
  }
  CHECK(res["pending"].empty());
  // All three were consumed; the running child and the other parent's are untouched.
  for (const char* id : {"r0", "r1", "r2"})
    CHECK(c.call("subagent/check", {{"parentId", "p"}, {"childId", id}})["result"]["state"] == "delivered");
  CHECK(c.call("subagent/check", {{"parentId", "p"}, {"childId", "running"}})["result"]["state"] == "running");
  CHECK(c.call("subagent/check", {{"parentId", "other"}, {"childId", "x"}})["result"]["state"] == "completed");
  // Without it a wait takes only what it lists.
  complete(c, "p", "s0", texts[0]);
  complete(c, "p", "s1", texts[1]);
  json only = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"s1"}}, {"timeoutMs", 0}});
  REQUIRE(only["result"]["sections"].size() == 1);
  CHECK(only["result"]["sections"][0]["childId"] == "s1");
  CHECK(c.call("subagent/check", {{"parentId", "p"}, {"childId", "s0"}})["result"]["state"] == "completed");
  // A bad value is refused with the field named.
  json bad = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"s0"}}, {"withReady", "yes"}});
  REQUIRE(bad.contains("error"));
  CHECK(bad["error"]["code"] == -32602);
  CHECK(bad["error"]["message"].get<std::string>().find("withReady") != std::string::npos);
}

TEST_CASE("reader copilot holds each section under Copilot CLI's 20,480-byte cut, its frame counted, whatever the wait caps - the batch keeps its budget, view pages") {
  // Caps a user raised past Copilot's cut: the reader's result_bytes, not the caps, bounds each.
  daemon_process d({"--wait-result-bytes", "65536", "--wait-batch-bytes", "200000"});
  raw_client c(d.socket());
  std::vector<std::string> texts;
  for (int i = 0; i < 2; ++i) texts.push_back(numbered_report(90000, 900, "r" + std::to_string(i)));
  for (int i = 0; i < 2; ++i) complete(c, "p", "r" + std::to_string(i), texts[i]);
  const auto wait = [&](const char* reader) {
    json r = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"r0", "r1"}}, {"timeoutMs", 0}, {"reader", reader}});
    REQUIRE_MESSAGE(r.contains("result"), r.dump());
    return r["result"];
  };
  const json res = wait("copilot");
  REQUIRE(res["sections"].size() == 2);
  const std::size_t most = handoff::copilot_reader.result_bytes - handoff::copilot_reader.frame_bytes;
  for (const json& s : res["sections"]) {
    CHECK(s["text"].get<std::string>().size() <= most);
    CHECK(s["text"].get<std::string>().size() > most - 2048);  // the cut, not a smaller cap, held it
    check_artifact(s, texts[std::stoi(s["childId"].get<std::string>().substr(1))]);
  }
  // Two sections near the cut: more than one cut could hold, so the batch was not kept within it.
  CHECK(res["text"].get<std::string>().size() > handoff::copilot_reader.result_bytes);
  const std::string text = res["text"];
  CHECK(text.find("view view_range=[") != std::string::npos);
  CHECK(text.find("read offset=") == std::string::npos);
}

TEST_CASE("a reader with no cut of its own (pi) takes the wait caps as they are") {
  daemon_process d({"--wait-result-bytes", "65536", "--wait-batch-bytes", "200000"});
  raw_client c(d.socket());
  const std::string text = numbered_report(90000, 900, "r0");
  complete(c, "p", "r0", text);
  json r = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"r0"}}, {"timeoutMs", 0}, {"reader", "pi"}});
  REQUIRE_MESSAGE(r.contains("result"), r.dump());
  const std::size_t shown = r["result"]["sections"][0]["text"].get<std::string>().size();
  CHECK(shown > handoff::copilot_reader.result_bytes);
  CHECK(shown <= 65536);
}

TEST_CASE("maxBytes keeps the batch within the harness's cut, and reader codex gives its shell's sed pages") {
  daemon_process d;
  raw_client c(d.socket());
  std::vector<std::string> texts;
  for (int i = 0; i < 4; ++i) texts.push_back(numbered_report(40000, 500, "m" + std::to_string(i)));
  for (int i = 0; i < 4; ++i) complete(c, "p", "m" + std::to_string(i), texts[i]);

  json r = c.call("subagent/wait", {{"parentId", "p"},
                                    {"childIds", {"m0", "m1", "m2", "m3"}},
                                    {"timeoutMs", 0},
                                    {"reader", "codex"},
                                    {"maxBytes", 10940}});
  REQUIRE_MESSAGE(r.contains("result"), r.dump());
  const json& res = r["result"];
  const std::string text = res["text"];
  CHECK(text.size() <= 10940);
  CHECK(res["budget"]["batchCapBytes"].get<std::size_t>() <= 10940);
  REQUIRE(res["sections"].size() + res["deferred"].get<std::size_t>() == 4);
  for (const json& s : res["sections"]) {
    CHECK(s["text"].get<std::string>().size() <= 10940);
    check_artifact(s, texts[std::stoi(s["childId"].get<std::string>().substr(1))]);
  }
  // The footer's calls are Codex's shell's: sed line ranges on the artifact, or the plan command.
  CHECK((text.find("exec_command `sed -n '") != std::string::npos ||
         text.find("exec_command `'") != std::string::npos));
  CHECK(text.find("read offset=") == std::string::npos);
  // Below the least a batch can hold, and a reader handoff does not know: refused, named.
  json small = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"m0"}}, {"maxBytes", 4095}});
  REQUIRE(small.contains("error"));
  CHECK(small["error"]["code"] == -32602);
  CHECK(small["error"]["message"].get<std::string>().find("maxBytes") != std::string::npos);
  json reader = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"m0"}}, {"reader", "no-such-harness"}});
  REQUIRE(reader.contains("error"));
  CHECK(reader["error"]["message"].get<std::string>().find("reader") != std::string::npos);
}
