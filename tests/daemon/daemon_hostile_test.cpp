// Hostile neighbours against a real handoffd (issue 6, part 5; docs/design.md §7 and §11):
// a stranger's uid, a symlink or FIFO planted where an artifact goes, the store swapped for a
// symlink while results are being saved, and clients that never read or dribble a byte a
// second. Each must leave the daemon serving others, writing nowhere but its own directories,
// with bounded memory.
//
// (A client that never reads and a frame dribbled too slowly are also covered one by one in
// daemon_bad_input_test.cpp; here they run together, with others served and memory measured.)
#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/fs/sha256.hpp"
#include "support/child_process.hpp"
#include "support/fault_daemon.hpp"
#include "support/fs_fixtures.hpp"
#include "support/raw_client.hpp"
#include "support/temp_dir.hpp"

using namespace handoff::test;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// A daemon on fresh directories, with a place outside them that belongs to the test.
struct neighbourhood {
  temp_dir tmp{"handoff-hostile"};
  fs::path run = tmp / "run";
  fs::path artifacts = tmp / "artifacts";
  fs::path queue = tmp / "queue";
  fs::path outside = tmp / "outside";  // the test's own files: nothing may appear or change here
  std::unique_ptr<handoffd_at> daemon;

  explicit neighbourhood(std::vector<std::string> extra = {}) {
    for (const auto& d : {run, outside}) {
      fs::create_directory(d);
      fs::permissions(d, fs::perms::owner_all, fs::perm_options::replace);
    }
    daemon = std::make_unique<handoffd_at>(handoffd_at::dirs{run, artifacts, queue}, std::move(extra));
  }
  fs::path socket() const { return daemon->socket(); }
};

json complete(raw_client& c, const std::string& child, const std::string& text,
              std::chrono::milliseconds timeout = 30s) {
  return c.call("subagent/completed",
                {{"parentId", "p"}, {"childId", child}, {"status", "done"}, {"finalText", text}},
                timeout);
}

// Completes `child` and waits for it; returns its one section.
json complete_and_wait(raw_client& c, const std::string& child, const std::string& text) {
  const json done = complete(c, child, text);
  REQUIRE_MESSAGE(done.contains("result"), done.dump());
  const json r = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {child}}, {"timeoutMs", 20000}});
  REQUIRE_MESSAGE(r.contains("result"), r.dump());
  REQUIRE(r["result"]["sections"].size() == 1);
  return r["result"]["sections"][0];
}

// A fresh connection is answered within `deadline` (generous: the machine is shared).
void serves_within(const fs::path& socket, std::chrono::milliseconds deadline = 5s) {
  const auto t0 = std::chrono::steady_clock::now();
  raw_client fresh(socket);
  const json r = fresh.call("daemon/status", nullptr, deadline);
  CHECK(r.contains("result"));
  CHECK(std::chrono::steady_clock::now() - t0 < deadline);
}

// A section whose full text was not saved, with `why` in the reason, and a footer that offers
// no file to read (the reason itself may name the offending path).
void check_not_saved(const json& s, const std::string& sha, const std::string& why) {
  CHECK(s["truncated"] == true);
  CHECK(s["artifact"]["saved"] == false);
  CHECK(s["artifact"]["sha256"] == sha);
  const std::string reason = s["artifact"].value("reason", "");
  CHECK_MESSAGE(reason.find(why) != std::string::npos, reason);
  const std::string text = s["text"];
  CHECK(text.rfind("BEGIN", 0) == 0);
  CHECK(text.find("Full text NOT saved") != std::string::npos);
  CHECK(text.find("Full text: ") == std::string::npos);
  CHECK(text.find("offset=") == std::string::npos);
}

}  // namespace

TEST_CASE("a client process running as another uid is refused without a word") {
  if (::geteuid() != 0 || ::access("/usr/bin/setpriv", X_OK) != 0) {
    cannot_inject("needs root and setpriv to run a client as another uid (the in-process "
                  "variant is daemon_bad_input_test's \"a peer with another uid is refused\")");
    return;
  }
  neighbourhood n;
  // Open the way on purpose, so only the daemon's SO_PEERCRED check stands in between.
  for (const auto& p : {n.tmp.path(), n.run}) fs::permissions(p, fs::perms::all);
  fs::permissions(n.socket(), fs::perms::all);

  auto run_cli = [&](std::vector<std::string> prefix, const char* log) {
    child_process::spec s;
    s.argv = std::move(prefix);
    for (const char* a : {HANDOFF_CLI_PATH, "status", "--socket"}) s.argv.emplace_back(a);
    s.argv.push_back(n.socket().string());
    s.log = n.run / log;
    child_process cli(std::move(s));
    const int status = cli.wait(30s);
    return std::make_pair(status, cli.log());
  };
  // The same client as our own uid is served: what follows fails for the uid alone.
  const auto [own_status, own_out] = run_cli({}, "own.log");
  CHECK_MESSAGE(own_status == 0, own_out);

  const auto [status, out] = run_cli(
      {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}, "stranger.log");
  CHECK_MESSAGE(status != 0, out);
  CHECK(eventually([&] {
    return n.daemon->log().find("refused a connection from uid 65534") != std::string::npos;
  }));
  serves_within(n.socket());
}

TEST_CASE("a symlink planted at an artifact's name is neither followed nor written through") {
  neighbourhood n;
  raw_client c(n.socket());
  const std::string text = numbered_report(60000, 900, "linked");
  const std::string dangling_text = numbered_report(60000, 900, "dangling");
  const std::string sha = handoff::sha256_hex(text);
  const std::string dangling_sha = handoff::sha256_hex(dangling_text);
  const fs::path victim = n.outside / "victim.txt";
  write_file(victim, "the test's own file\n", 0600);
  fs::create_symlink(victim, n.artifacts / (sha + ".txt"));
  fs::create_symlink(n.outside / "created-through-link", n.artifacts / (dangling_sha + ".txt"));

  check_not_saved(complete_and_wait(c, "linked", text), sha, "symlink");
  check_not_saved(complete_and_wait(c, "dangling", dangling_text), dangling_sha, "symlink");

  // Nothing written through either link, and both are left as they were.
  CHECK(read_file(victim) == "the test's own file\n");
  CHECK(names_in(n.outside) == std::vector<std::string>{"victim.txt"});
  CHECK(fs::read_symlink(n.artifacts / (sha + ".txt")) == victim);
  CHECK(fs::is_symlink(n.artifacts / (dangling_sha + ".txt")));
  // Nor read through: artifact/read does not serve the victim's content as the artifact.
  CHECK(c.call("artifact/read", {{"sha256", sha}})["error"]["code"] == -32007);
  serves_within(n.socket());
}

TEST_CASE("a FIFO planted at an artifact's name or a queued text's name blocks nobody") {
  neighbourhood n;
  raw_client c(n.socket());
  // More FIFOs than the daemon has worker threads: a blocking open would take them all.
  std::vector<std::string> texts;
  for (int i = 0; i < 4; ++i) {
    texts.push_back(numbered_report(60000, 900, "fifo" + std::to_string(i)));
    const fs::path at = n.artifacts / (handoff::sha256_hex(texts.back()) + ".txt");
    REQUIRE(::mkfifo(at.c_str(), 0600) == 0);
  }
  for (int i = 0; i < 4; ++i) {
    const json s = complete_and_wait(c, "fifo" + std::to_string(i), texts[static_cast<std::size_t>(i)]);
    check_not_saved(s, handoff::sha256_hex(texts[static_cast<std::size_t>(i)]), "FIFO");
    CHECK(c.call("artifact/read", {{"sha256", handoff::sha256_hex(texts[static_cast<std::size_t>(i)])}},
                 10s)["error"]["code"] == -32007);
  }
  serves_within(n.socket());

  // In the queue a FIFO where the final text goes (one large enough to be kept as a file):
  // refused at once, not acknowledged.
  const std::string queued = numbered_report(1'100'000, 11000, "queued");  // over file_text_bytes (1 MiB)
  const fs::path text_at = n.queue / "texts" / (handoff::sha256_hex(queued) + ".txt");
  REQUIRE(::mkfifo(text_at.c_str(), 0600) == 0);
  const json refused = complete(c, "queued", queued, 10s);
  CHECK(refused["error"]["code"] == -32005);
  CHECK(refused["error"]["message"].get<std::string>().find("FIFO") != std::string::npos);
  serves_within(n.socket());
  CHECK(n.daemon->alive());
}

TEST_CASE("the store swapped for a symlink while results are saved writes nothing outside it") {
  neighbourhood n;
  const fs::path decoy = n.outside / "decoy";
  fs::create_directory(decoy);
  fs::permissions(decoy, fs::perms::owner_all, fs::perm_options::replace);

  // The swaps happen in stable phases: k even, `artifacts` is a real directory (the one the
  // daemon made at start, then ones it makes again); k odd, it is a symlink to the decoy.
  // `state` is 2k while phase k stands and odd while the directory is being changed, so a
  // write that saw the same even state before and after ran entirely within one phase.
  std::atomic<int> state{0};
  std::atomic<bool> stop{false};
  struct record {
    int before, after;
    std::string text, sha;
    json section;
  };
  std::mutex mutex;
  std::vector<record> records;
  std::string writer_error;
  std::thread writer([&] {
    try {
      raw_client c(n.socket());
      for (int i = 0; !stop; ++i) {
        const int before = state;
        record r{before, 0, numbered_report(40000, 700, "w" + std::to_string(i)), "", nullptr};
        r.sha = handoff::sha256_hex(r.text);
        // No doctest assertion off the main thread: a failure is thrown and reported below.
        const std::string child = "w" + std::to_string(i);
        const json done = complete(c, child, r.text);
        const json waited = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {child}}, {"timeoutMs", 20000}});
        if (!done.contains("result") || !waited.contains("result") ||
            waited["result"]["sections"].size() != 1) {
          throw std::runtime_error("write " + child + " failed: " + done.dump() + " " + waited.dump());
        }
        r.section = waited["result"]["sections"][0];
        r.after = state;
        std::lock_guard lock(mutex);
        records.push_back(std::move(r));
      }
    } catch (const std::exception& e) {
      std::lock_guard lock(mutex);
      writer_error = e.what();
      stop = true;
    }
  });
  // Joined however the test ends (a failed REQUIRE throws past the join below).
  struct joiner {
    std::atomic<bool>& stop;
    std::thread& t;
    ~joiner() {
      stop = true;
      if (t.joinable()) t.join();
    }
  } join_writer{stop, writer};
  // At least two writes made wholly within the phase standing now.
  auto two_in_phase = [&] {
    return eventually([&] {
      std::lock_guard lock(mutex);
      const int s = state;
      return !writer_error.empty() ||
             std::count_if(records.begin(), records.end(), [&](const record& r) {
               return r.before == s && r.after == s;
             }) >= 2;
    });
  };
  const int phases = 5;
  for (int k = 0; k + 1 < phases; ++k) {
    CHECK(two_in_phase());
    ++state;
    if (k % 2 == 0) {
      REQUIRE_MESSAGE(fs::is_directory(fs::symlink_status(n.artifacts)),
                      "the daemon did not make the store directory again");
      fs::rename(n.artifacts, n.tmp / ("artifacts.phase" + std::to_string(k)));
      fs::create_directory_symlink(decoy, n.artifacts);
    } else {
      fs::remove(n.artifacts);  // the symlink only; the daemon makes the directory again
    }
    ++state;
  }
  CHECK(two_in_phase());
  stop = true;
  writer.join();
  REQUIRE_MESSAGE(writer_error.empty(), writer_error);

  // Nothing ever reached the decoy, and every result was delivered, head first.
  CHECK(names_in(decoy).empty());
  auto dir_of_phase = [&](int k) {
    return k == phases - 1 ? n.artifacts : n.tmp / ("artifacts.phase" + std::to_string(k));
  };
  int stable = 0;
  for (const record& r : records) {
    CAPTURE(r.sha);
    CHECK(r.section["text"].get<std::string>().rfind("BEGIN w", 0) == 0);
    const bool saved = r.section["artifact"]["saved"] == true;
    if (r.before != r.after || r.before % 2 != 0) {
      // Straddled a change: either answer is right, but a saved one is in one of our own
      // directories, never in the decoy.
      if (!saved) continue;
      bool found = false;
      for (int k = 0; k < phases; k += 2)
        found = found || fs::exists(fs::symlink_status(dir_of_phase(k) / (r.sha + ".txt")));
      CHECK(found);
      continue;
    }
    ++stable;
    const int k = r.before / 2;
    if (k % 2 == 1) {
      check_not_saved(r.section, r.sha, "symlink");
    } else {
      // Saved, and the path the footer showed held the text: the directory standing then.
      REQUIRE(saved);
      CHECK(r.section["artifact"]["path"] == (n.artifacts / (r.sha + ".txt")).string());
      CHECK(read_file(dir_of_phase(k) / (r.sha + ".txt")) == r.text);
    }
  }
  CHECK(stable >= 2 * phases);
  CHECK(mode_of(n.artifacts) == 0700);
  CHECK(n.daemon->alive());
  serves_within(n.socket());
}

TEST_CASE("a queue directory moved away while results are held: new completions are refused, held ones still delivered") {
  neighbourhood n;
  raw_client c(n.socket());
  const std::string held = "kept through the move\n";
  REQUIRE(complete(c, "held", held).contains("result"));
  fs::rename(n.queue, n.tmp / "queue-moved");

  // Acknowledging now would write under a path the next start does not read: refused, -32005.
  const json refused = complete(c, "late", "written after the move");
  REQUIRE(refused.contains("error"));
  CHECK(refused["error"]["code"] == -32005);
  // What was acknowledged before is read through the directory the daemon holds.
  const json r = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"held"}}, {"timeoutMs", 20000}});
  REQUIRE_MESSAGE(r.contains("result"), r.dump());
  REQUIRE(r["result"]["sections"].size() == 1);
  CHECK(r["result"]["sections"][0]["text"] == held);
  CHECK(n.daemon->alive());
}

TEST_CASE("clients that never read or send a byte a second leave others served in bounded memory") {
  // Bound: the daemon's VmRSS may grow by at most 48 MiB over its warmed-up level while the
  // hostile clients run. Unbounded, the reader that never reads asks for about 100 MiB of
  // replies (2,000 pages of 50 KiB); the outbox cap (256 KiB here) must drop it long before.
  constexpr long bound_kib = 48 * 1024;
  neighbourhood n({"--max-outbox-bytes", "262144", "--frame-timeout-ms", "2000"});
  const pid_t pid = n.daemon->pid();
  raw_client c(n.socket());
  const std::string big = numbered_report(1 << 20, 20000, "big");
  const json s = complete_and_wait(c, "big", big);
  REQUIRE(s["artifact"]["saved"] == true);
  const std::string sha = s["artifact"]["sha256"];
  for (int i = 0; i < 20; ++i) {  // warm up the paths the hostile clients will use
    REQUIRE(c.call("artifact/read", {{"sha256", sha}, {"offset", 1 + i * 1000}, {"limit", 2000}})
                .contains("result"));
  }
  const long baseline = vm_rss_kib(pid);
  REQUIRE(baseline > 0);

  // The reader that never reads: a tiny receive buffer, 2,000 requests for 50 KiB pages.
  raw_client hog(n.socket());
  const int tiny = 4096;
  ::setsockopt(hog.fd(), SOL_SOCKET, SO_RCVBUF, &tiny, sizeof tiny);
  std::string requests;
  for (int i = 0; i < 2000; ++i) {
    requests += R"({"jsonrpc":"2.0","id":)" + std::to_string(i) +
                R"(,"method":"artifact/read","params":{"sha256":")" + sha +
                R"(","offset":1,"limit":2000}})" "\n";
  }
  // The dribblers: a byte a second each, until the frame timeout cuts them off.
  std::vector<std::unique_ptr<raw_client>> dribblers;
  for (int i = 0; i < 8; ++i) dribblers.push_back(std::make_unique<raw_client>(n.socket()));
  std::atomic<bool> done{false};
  std::atomic<long> peak{baseline};
  std::thread sampler([&] {
    while (!done) {
      const long now = vm_rss_kib(pid);
      if (now > peak) peak = now;
      std::this_thread::sleep_for(20ms);  // the RSS sampling interval
    }
  });
  std::thread dribble([&] {
    const std::string frame = R"({"jsonrpc":"2.0","id":1,"method":"daemon/status"})" "\n";
    for (std::size_t i = 0; i < frame.size() && !done; ++i) {
      for (auto& d : dribblers) ::send(d->fd(), frame.data() + i, 1, MSG_NOSIGNAL);
      std::this_thread::sleep_for(1s);  // slow on purpose: the dribblers under test
    }
  });
  try {
    hog.send_raw(requests);
  } catch (const std::exception& e) {
    MESSAGE("the hog was dropped while it was still sending: ", std::string(e.what()));
  }

  // Others are served meanwhile, promptly, including a cut result's delivery.
  // Each fresh client must be answered within serves_within's deadline; a fixed number of
  // them (not as many as fit in a time window) keeps the check honest on a loaded machine.
  for (int served = 0; served < 5; ++served) serves_within(n.socket());
  const std::string other = numbered_report(40000, 700, "other");
  CHECK(complete_and_wait(c, "other", other)["artifact"]["saved"] == true);

  // The hog is dropped for its outbox; every dribbler is cut off by the frame timeout.
  CHECK(hog.closed_within(10s));
  for (auto& d : dribblers) CHECK(d->closed_within(10s));
  done = true;
  dribble.join();
  sampler.join();
  CHECK(n.daemon->log().find("outbox over") != std::string::npos);
  MESSAGE("VmRSS: ", baseline, " KiB warmed up, ", peak.load(), " KiB at peak (bound +", bound_kib,
          " KiB)");
  CHECK(peak - baseline < bound_kib);
  CHECK(vm_rss_kib(pid) - baseline < bound_kib);
  serves_within(n.socket());
}
