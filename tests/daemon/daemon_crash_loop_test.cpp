// Crash loop (issue 6, part 4): handoffd is killed with SIGKILL at random moments while
// producers complete results and parents receive and acknowledge them, then restarted; every
// completion is accounted for (tests/support/crash_ledger.hpp says how).
//
// The load, all at once: producers send subagent/completed for many (parent, child) pairs with
// texts from a few bytes to 1.3 MiB (some cut, so artifacts are written), probing idempotency
// (the same text again must answer duplicate) and conflicts (another text must be refused);
// idle parents take auto-deliveries through the C++ client library, refusing a few and
// dropping their connection now and then; busy parents collect their children with
// subagent/wait. Every client reconnects as the TypeScript adapter does. After the last kill
// the daemon is restarted quietly, everything is drained, and it is stopped cleanly; then the
// queue and the store on disk are checked.
//
// HANDOFF_CRASH_SEED=<n> repeats a run's choices (sizes, kill moments, refusals; the thread
// interleaving is the machine's), HANDOFF_CRASH_ROUNDS=<n> runs longer than the default 200,
// HANDOFF_CRASH_KEEP_LOG=<file> keeps the daemon's log of every generation.
#include <doctest/doctest.h>

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "engine/queue/queue_files.hpp"
#include "engine/fs/sha256.hpp"
#include "handoff/client.hpp"
#include "support/crash_ledger.hpp"
#include "support/daemon_process.hpp"
#include "support/raw_client.hpp"

using namespace handoff::test;
namespace hc = handoff::client;
namespace rpc = handoff::rpc;
namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace {

using steady = std::chrono::steady_clock;

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

struct run_options {
  std::uint64_t seed = 0;
  int rounds = 200;
  int producers = 3;
  int auto_parents = 6;  // idle: served by auto-delivery
  int wait_parents = 2;  // busy: served by subagent/wait, by auto-delivery once drained
  int min_load_ms = 3, max_load_ms = 200;  // load between two kills
};

// What the threads of one run share.
struct crash_run {
  explicit crash_run(run_options o) : opt(o) {
    for (int i = 0; i < opt.auto_parents; ++i) auto_parents.push_back("auto-" + std::to_string(i));
    for (int i = 0; i < opt.wait_parents; ++i) wait_parents.push_back("wait-" + std::to_string(i));
  }
  run_options opt;
  daemon_process daemon{{}, std::chrono::seconds(60)};  // a start may crawl on a loaded machine
  crash_ledger ledger;
  std::vector<std::string> auto_parents, wait_parents;
  std::atomic<bool> stop_load{false};  // producers and the waiter stop
  std::atomic<bool> draining{false};   // parents refuse no more, and drop more often
  std::atomic<bool> stop_all{false};   // parents stop
  std::atomic<pid_t> daemon_pid{0};    // the daemon started last
  std::atomic<std::size_t> next_child{0};
  std::atomic<std::size_t> refusals{0}, drops{0}, probes{0}, parent_sessions{0};

  // Why completion attempts failed, for the report.
  void note_cut(const std::string& why) {
    std::lock_guard lock(cuts_mutex);
    ++cuts[why];
  }
  std::string cut_reasons() const {
    std::lock_guard lock(cuts_mutex);
    std::string out;
    for (const auto& [why, n] : cuts) out += (out.empty() ? "" : ", ") + why + " " + std::to_string(n);
    return out;
  }
  // How long acknowledged completions took, ms (the queue's fsyncs dominate).
  void note_ack_ms(double ms) {
    std::lock_guard lock(cuts_mutex);
    ack_ms.push_back(ms);
  }
  std::pair<double, double> ack_ms_median_max() const {
    std::lock_guard lock(cuts_mutex);
    if (ack_ms.empty()) return {0, 0};
    std::vector<double> v = ack_ms;
    std::sort(v.begin(), v.end());
    return {v[v.size() / 2], v.back()};
  }
  mutable std::mutex cuts_mutex;
  std::map<std::string, std::size_t> cuts;
  std::vector<double> ack_ms;
};

std::optional<hc::connection> connect(const crash_run& run) {
  hc::options o;
  o.socket = run.daemon.socket();
  o.call_timeout = milliseconds(20'000);
  try {
    return hc::connection(std::move(o));
  } catch (const hc::client_error&) {
    return std::nullopt;  // between a kill and the restart
  }
}

// Every pause here is on purpose, none waits for an order: a reconnect's or an idle poller's
// back-off, the random load between kills, a dead socket met for a moment, the drain's poll.
void pause_ms(int ms) { std::this_thread::sleep_for(milliseconds(ms)); }

std::size_t below(std::mt19937_64& rng, std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); }

rpc::completed_params params_of(const planned_completion& c) {
  return rpc::completed_params{c.parent_id, c.child_id, c.title, c.status, c.error, c.final_text};
}

bool retry_later(const hc::client_error& e) {
  return e.code() == rpc::errc::storage_failed || e.code() == rpc::errc::shutting_down;
}

// ---- producers ------------------------------------------------------------------------------

// One attempt at a completion. True when settled (acknowledged, or refused for good).
bool try_complete(crash_run& run, std::optional<hc::connection>& conn, const planned_completion& c) {
  if (!conn && !(conn = connect(run))) {
    pause_ms(1);
    return false;
  }
  run.ledger.sent(c);
  try {
    const auto t0 = steady::now();
    run.ledger.acknowledged(c, conn->completed(params_of(c)));
    run.note_ack_ms(std::chrono::duration<double, std::milli>(steady::now() - t0).count());
    return true;
  } catch (const hc::client_error& e) {
    if (e.kind() != hc::error_kind::rpc) {
      conn.reset();  // cut by the kill: reconnect and send the same completion again
      run.note_cut(std::string(hc::to_string(e.kind())));
      return false;
    }
    if (retry_later(e)) {
      run.note_cut("rpc " + std::to_string(static_cast<int>(e.code())));
      return false;
    }
    run.ledger.violation("completed " + c.parent_id + "/" + c.child_id + " refused: " + e.what());
    return true;
  }
}

// Sends an acknowledged completion again: the same text must answer duplicate, another text
// must be refused as a conflict, whether the result is still queued or long delivered.
void probe(crash_run& run, std::optional<hc::connection>& conn, std::mt19937_64& rng) {
  const auto id = run.ledger.random_acknowledged(rng);
  if (!id || !conn) return;
  planned_completion c = plan_completion(run.opt.seed, id->first, id->second);
  const bool conflicting = below(rng, 2) == 0;
  if (conflicting) c.final_text += "\n(a different ending)";
  const std::string who = id->first + "/" + id->second;
  ++run.probes;
  try {
    const rpc::completed_result r = conn->completed(params_of(c));
    if (conflicting) run.ledger.violation("another final text for acknowledged " + who + " was accepted");
    else if (!r.duplicate || r.sha256 != c.sha256)
      run.ledger.violation("the same completion of " + who + " again was not answered as a duplicate");
  } catch (const hc::client_error& e) {
    if (e.kind() != hc::error_kind::rpc) conn.reset();
    else if (!(conflicting && e.code() == rpc::errc::conflict) && !retry_later(e))
      run.ledger.violation("probing " + who + (conflicting ? " with another text" : "") + ": " + e.what());
  }
}

void producer(crash_run& run, int index) {
  std::mt19937_64 rng(run.opt.seed * 1000003 + static_cast<std::uint64_t>(index));
  std::optional<hc::connection> conn;
  const std::size_t parents = run.auto_parents.size() + run.wait_parents.size();
  while (!run.stop_load) {
    const std::size_t p = below(rng, parents);
    const std::string& parent =
        p < run.auto_parents.size() ? run.auto_parents[p] : run.wait_parents[p - run.auto_parents.size()];
    const planned_completion c = plan_completion(run.opt.seed, parent, "c" + std::to_string(run.next_child++));
    while (!run.stop_load && !try_complete(run, conn, c)) {
    }
    if (below(rng, 10) == 0) probe(run, conn, rng);
  }
}

// ---- parents --------------------------------------------------------------------------------

// A parent's endpoint through the client library, reconnecting until the run ends. It answers
// usage (known or not, at random), acknowledges deliveries, refuses about one in twenty under
// load (then says idle again, which asks for the resend) and hangs up right after one
// acknowledgement in thirty (one in four during the drain).
void parent_endpoint_loop(crash_run& run, const std::string& parent, std::uint64_t salt) {
  std::mt19937_64 rng(run.opt.seed ^ (salt * 0x9e3779b97f4a7c15ULL));
  while (!run.stop_all) {
    std::optional<hc::connection> conn = connect(run);
    if (!conn) {
      pause_ms(1);
      continue;
    }
    bool refused = false, drop = false;
    hc::parent_callbacks on;
    on.usage = [&rng]() -> std::optional<rpc::usage_dto> {
      if (below(rng, 2) == 0) return std::nullopt;
      rpc::usage_dto u;
      u.tokens = static_cast<std::int64_t>(below(rng, 190'000));
      u.context_window = 200'000;
      return u;
    };
    on.deliver = [&](const rpc::deliver_params& d) {
      run.ledger.delivered(parent, d, run.daemon_pid.load());
      if (!run.draining && below(rng, 20) == 0) {
        refused = true;
        ++run.refusals;
        throw std::runtime_error("refused by the crash test; send it again");
      }
      run.ledger.delivery_acknowledged(d.delivery_id);
      // Reconnecting right after an acknowledgement must not stall what is still pending: the
      // drain, with no new completion to wake a flush, is where that would show.
      if (below(rng, run.draining ? 4 : 30) == 0) drop = true;
    };
    try {
      hc::parent_endpoint endpoint(*conn, parent, on, "crash-loop");
      ++run.parent_sessions;
      endpoint.report_idle();
      while (!run.stop_all && !drop) {
        conn->serve_one(milliseconds(50));
        if (refused) {
          refused = false;
          endpoint.report_idle();
        }
      }
      if (drop) ++run.drops;
    } catch (const hc::client_error&) {
      // The daemon died (or was not up yet): connect again.
    }
  }
}

// ---- the waiter -----------------------------------------------------------------------------

pid_t peer_pid(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  return ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 ? cred.pid : 0;
}

int error_code(const json& reply) { return reply["error"]["code"].get<int>(); }

// Asks the daemon `pid` about results a wait took from an earlier daemon: still held means the
// kill came between the answer and its consumption reaching the disk, so it is owed again.
void settle_wait_receipts(crash_run& run, raw_client& c, pid_t pid) {
  for (const std::string& parent : run.wait_parents) {
    for (const std::string& child : run.ledger.unsettled_wait_receipts(parent, pid)) {
      const json r = c.call("subagent/check", {{"parentId", parent}, {"childId", child}});
      bool held = false;
      if (r.contains("error")) {
        const int code = error_code(r);
        if (code != static_cast<int>(rpc::errc::unknown_parent) && code != static_cast<int>(rpc::errc::unknown_child))
          run.ledger.violation("check " + parent + "/" + child + ": " + r.dump());
      } else {
        const std::string state = r["result"]["state"];
        held = state == "completed" || state == "delivering";
      }
      run.ledger.wait_receipt_settled(parent, child, held);
    }
  }
}

// A wait named children the daemon does not know: lost, if they were acknowledged.
void unknown_children(crash_run& run, const std::string& parent, const std::vector<std::string>& listed,
                      const json& reply, pid_t pid) {
  std::vector<std::string> unknown = listed;
  if (error_code(reply) == static_cast<int>(rpc::errc::unknown_child))
    unknown = reply["error"]["data"]["childIds"].get<std::vector<std::string>>();
  else if (error_code(reply) != static_cast<int>(rpc::errc::unknown_parent))
    return run.ledger.violation("wait on " + parent + ": " + reply.dump());
  for (const std::string& child : unknown)
    if (run.ledger.must_be_held(parent, child))
      run.ledger.violation("LOST: acknowledged " + parent + "/" + child + " is unknown to daemon " + std::to_string(pid));
}

void waiter(crash_run& run) {
  std::mt19937_64 rng(run.opt.seed + 77);
  while (!run.stop_load) {
    std::unique_ptr<raw_client> c;
    try {
      c = std::make_unique<raw_client>(run.daemon.socket());
    } catch (const std::exception&) {
      pause_ms(1);
      continue;
    }
    const pid_t pid = peer_pid(c->fd());
    try {
      settle_wait_receipts(run, *c, pid);
      while (!run.stop_load) {
        const std::string& parent = run.wait_parents[below(rng, run.wait_parents.size())];
        const std::vector<std::string> owed = run.ledger.owed_to_wait(parent, 64);
        if (owed.empty()) {
          pause_ms(2);
          continue;
        }
        json params = {{"parentId", parent}, {"childIds", owed}, {"timeoutMs", 50 + below(rng, 200)}};
        if (below(rng, 2) == 0) params["usage"] = {{"tokens", below(rng, 150'000)}, {"contextWindow", 200'000}};
        const json reply = c->call("subagent/wait", params);
        if (reply.contains("error")) unknown_children(run, parent, owed, reply, pid);
        else run.ledger.waited(parent, rpc::decode_result<rpc::wait_result>(reply["result"]), pid);
      }
    } catch (const std::exception&) {
      // EOF or timeout: the daemon died under us.
    }
  }
}

// ---- after the run --------------------------------------------------------------------------

json daemon_status(const crash_run& run) {
  raw_client c(run.daemon.socket());
  return c.call("daemon/status", nullptr)["result"];
}

bool queue_drained(const json& status) {
  return status["queue"]["results"] == 0 && status["queue"]["deliveries"] == 0;
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  return out;
}

// The disk after the clean stop: artifacts re-hash to their names, the queue holds no text file
// and a tombstone for every acknowledged completion (its journal may keep retired entries until
// its segment fills), and no temp file is left anywhere.
std::vector<std::string> disk_problems(const crash_run& run) {
  std::vector<std::string> problems;
  const fs::path& store = run.daemon.artifact_dir();
  for (const std::string& name : names_in(store)) {
    const bool named = name.size() == 68 && name.ends_with(".txt") && handoff::is_sha256_hex(name.substr(0, 64));
    if (!named) problems.push_back("unexpected file in the store: " + name);
    else if (file_sha256(store / name) != name.substr(0, 64)) problems.push_back("artifact " + name + " does not re-hash to its name");
  }
  for (const auto& [path, sha] : run.ledger.artifacts())
    if (!fs::exists(path) || file_sha256(path) != sha) problems.push_back("delivered artifact " + path.string() + " is gone or changed");
  const fs::path& queue = run.daemon.queue_dir();
  for (const std::string& name : names_in(queue / "texts")) problems.push_back("queue texts/" + name + " left behind");
  for (const auto& e : fs::recursive_directory_iterator(queue))
    if (e.path().filename().string().starts_with(".tmp-")) problems.push_back("temp file left: " + e.path().string());
  for (const auto& [parent, child] : run.ledger.acknowledged_pairs())
    if (!fs::exists(queue / "done" / handoff::completion_key(parent, child)))
      problems.push_back("no tombstone for acknowledged " + parent + "/" + child);
  return problems;
}

// Recovery may only find what a kill leaves between two steps of a write it orders; a record
// or text that is torn, does not decode or lost its text is a broken promise.
struct recovery_notes {
  std::size_t expected = 0;
  std::vector<std::string> unexpected;
};
recovery_notes read_recovery_notes(const std::string& log) {
  static const std::vector<std::string> benign = {
      "a temp file left by a crash",                 // a write cut before its rename
      "none of it was acknowledged",                 // a group's append cut by the kill (torn tail)
      "no record uses it",                           // a large text written, its group's entry not
  };
  recovery_notes notes;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    const bool recovery = line.find("queue recovery: ") != std::string::npos;
    const bool alarming = line.find(" critical ") != std::string::npos || line.find("failed unexpectedly") != std::string::npos;
    if (!recovery && !alarming) continue;
    const bool ok = recovery && std::any_of(benign.begin(), benign.end(), [&](const std::string& b) {
                      return line.find(b) != std::string::npos;
                    });
    if (ok) ++notes.expected;
    else if (notes.unexpected.size() < 20) notes.unexpected.push_back(line);
  }
  return notes;
}

struct crash_report {
  int kills = 0;
  double seconds = 0;
  double restart_ms_mean = 0, restart_ms_max = 0;
  crash_ledger::counts counts;
  std::vector<std::string> violations, undelivered, disk, idempotency;
  json final_status;
  bool drained = false;
  int stop_status = -1;
  recovery_notes recovery;
};

std::string summary(const crash_run& run, const crash_report& r) {
  const auto& n = r.counts;
  const auto ack = run.ack_ms_median_max();
  char buf[2048];
  std::snprintf(buf, sizeof buf,
                "crash loop: seed %llu, %d kills in %.1f s, restart %.1f ms mean / %.1f ms max\n"
                "  completions: %zu acknowledged of %zu attempts (%zu attempts cut by a kill: %s; %zu answered "
                "duplicate), %zu probes, acknowledged in %.0f ms median / %.0f ms max\n"
                "  auto-delivery: %zu deliveries, %zu sections (%zu cut), %zu resends (%zu after an acknowledgement), "
                "%zu refused, %zu drops, %zu endpoint sessions\n"
                "  waits: %zu answers with %zu sections, %zu consumptions cut by a kill and owed again, "
                "%zu wait results delivered again\n"
                "  recovery notes expected of a kill: %zu",
                static_cast<unsigned long long>(run.opt.seed), r.kills, r.seconds, r.restart_ms_mean, r.restart_ms_max,
                n.acknowledged, n.attempts, n.cut_attempts, run.cut_reasons().c_str(), n.duplicates_answered, run.probes.load(), ack.first, ack.second, n.deliveries,
                n.sections, n.truncated, n.resends, n.resends_after_ack, run.refusals.load(), run.drops.load(),
                run.parent_sessions.load(), n.waits_returning, n.wait_sections, n.wait_cut_by_kill, n.wait_redelivered,
                r.recovery.expected);
  return buf;
}

// The run's threads, stopped and joined on every way out (a failed restart throws).
struct run_threads {
  explicit run_threads(crash_run& r) : run(r) {}
  ~run_threads() {
    run.stop_load = true;
    run.draining = true;
    run.stop_all = true;
    join_load();
    for (auto& t : parents) t.join();
  }
  void join_load() {
    for (auto& t : load)
      if (t.joinable()) t.join();
  }
  crash_run& run;
  std::vector<std::thread> load, parents;
};

crash_report run_crash_loop(crash_run& run) {
  crash_report report;
  const auto began = steady::now();
  std::mt19937_64 rng(run.opt.seed);
  run.daemon_pid = run.daemon.pid();

  run_threads threads(run);
  auto& load = threads.load;
  auto& parents = threads.parents;
  for (int i = 0; i < run.opt.producers; ++i) load.emplace_back(producer, std::ref(run), i);
  load.emplace_back(waiter, std::ref(run));
  for (std::size_t i = 0; i < run.auto_parents.size(); ++i)
    parents.emplace_back(parent_endpoint_loop, std::ref(run), run.auto_parents[i], i + 1);

  double restart_total_ms = 0;
  for (int round = 0; round < run.opt.rounds; ++round) {
    pause_ms(static_cast<int>(run.opt.min_load_ms + below(rng, run.opt.max_load_ms - run.opt.min_load_ms + 1)));
    run.daemon.kill_hard();
    ++report.kills;
    if (round + 1 == run.opt.rounds) {
      // The last kill ends the load: what was cut stays cut; then a quiet restart.
      run.stop_load = true;
      run.draining = true;
      threads.join_load();
    } else {
      pause_ms(static_cast<int>(below(rng, 4)));  // clients meet a dead socket for a moment
    }
    const auto t0 = steady::now();
    run.daemon.start();
    const double ms = std::chrono::duration<double, std::milli>(steady::now() - t0).count();
    restart_total_ms += ms;
    report.restart_ms_max = std::max(report.restart_ms_max, ms);
    run.daemon_pid = run.daemon.pid();
  }
  report.restart_ms_mean = restart_total_ms / run.opt.rounds;

  // Drain: every parent idle with an endpoint, until all is delivered and the queue is empty.
  for (std::size_t i = 0; i < run.wait_parents.size(); ++i)
    parents.emplace_back(parent_endpoint_loop, std::ref(run), run.wait_parents[i], 100 + i);
  const auto deadline = steady::now() + std::chrono::seconds(60);
  while (steady::now() < deadline) {
    if (run.ledger.all_delivered()) {
      report.final_status = daemon_status(run);
      if (queue_drained(report.final_status)) {
        report.drained = true;
        break;
      }
    }
    pause_ms(20);
  }
  if (!report.drained) report.final_status = daemon_status(run);

  // Every acknowledged completion sent once more, after all is delivered: a duplicate each time,
  // and nothing is queued again.
  if (report.drained) {
    std::optional<hc::connection> conn = connect(run);
    const auto acked = run.ledger.acknowledged_pairs();
    for (std::size_t i = 0; conn && i < acked.size(); i += std::max<std::size_t>(1, acked.size() / 50)) {
      const planned_completion c = plan_completion(run.opt.seed, acked[i].first, acked[i].second);
      const rpc::completed_result r = conn->completed(params_of(c));
      if (!r.duplicate) report.idempotency.push_back(c.parent_id + "/" + c.child_id + " was taken as new");
    }
    if (!queue_drained(daemon_status(run))) report.idempotency.push_back("resends after the drain were queued again");
  }

  run.stop_all = true;
  for (auto& t : parents) t.join();
  parents.clear();
  report.stop_status = run.daemon.stop();
  report.seconds = std::chrono::duration<double>(steady::now() - began).count();
  report.counts = run.ledger.totals();
  report.violations = run.ledger.violations();
  report.undelivered = run.ledger.undelivered();
  report.disk = disk_problems(run);
  report.recovery = read_recovery_notes(run.daemon.log());
  if (const char* keep = std::getenv("HANDOFF_CRASH_KEEP_LOG"); keep != nullptr && *keep != '\0')
    fs::copy_file(run.daemon.log_path(), keep, fs::copy_options::overwrite_existing);
  return report;
}

run_options options_from_env(std::uint64_t default_seed) {
  run_options o;
  o.seed = env_number("HANDOFF_CRASH_SEED", default_seed);
  o.rounds = static_cast<int>(env_number("HANDOFF_CRASH_ROUNDS", 200));
  return o;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += "\n  " + l;
  return out;
}

void check_crash_loop(const run_options& opt) {
  crash_run run(opt);
  std::fprintf(stderr, "crash loop: seed %llu, %d rounds (repeat with HANDOFF_CRASH_SEED=%llu)\n",
               static_cast<unsigned long long>(opt.seed), opt.rounds, static_cast<unsigned long long>(opt.seed));
  const crash_report r = run_crash_loop(run);
  const std::string text = summary(run, r);
  std::fprintf(stderr, "%s\n", text.c_str());
  INFO(text);

  CHECK(r.kills == opt.rounds);
  CHECK_MESSAGE(r.violations.empty(), joined(r.violations));
  CHECK_MESSAGE(r.undelivered.empty(), r.undelivered.size(), " acknowledged, never delivered:", joined(r.undelivered));
  CHECK_MESSAGE(r.drained, "queue not drained: ", r.final_status.dump());
  CHECK(r.final_status["children"]["completed"] == 0);
  CHECK(r.final_status["children"]["delivering"] == 0);
  CHECK_MESSAGE(r.idempotency.empty(), joined(r.idempotency));
  CHECK(r.stop_status == 0);
  CHECK_MESSAGE(r.disk.empty(), joined(r.disk));
  CHECK_MESSAGE(r.recovery.unexpected.empty(), joined(r.recovery.unexpected));
  // The run was a real one: results of every kind went through every path.
  CHECK(r.counts.acknowledged >= static_cast<std::size_t>(opt.rounds));
  CHECK(r.counts.truncated > 0);
  CHECK(r.counts.deliveries > 0);
  CHECK(r.counts.wait_sections > 0);
}

}  // namespace

// Found by the crash loop's drain (seed 1089180670, 40 rounds; the interleaving decides): a
// parent that hung up right after acknowledging and came back at once was registered while
// the daemon was still retiring the acknowledged results, its flush gave way to the one in
// progress, which then ended on the closed connection: what was pending stayed pending until
// some other event. Here every delivery is acknowledged by a connection that hangs up at once.
TEST_CASE("a parent that reconnects right after each acknowledgement still gets everything pending") {
  // Small batches (about three results each at the 2 KiB floor), so that there are several.
  daemon_process d({"--auto-result-bytes", "4096", "--auto-batch-bytes", "8192"});
  raw_client worker(d.socket());
  constexpr std::size_t results = 12;
  for (std::size_t i = 0; i < results; ++i) {
    const json r = worker.call("subagent/completed", {{"parentId", "p"}, {"childId", "c" + std::to_string(i)},
                                                      {"status", "done"},
                                                      {"finalText", numbered_report(40000, 400, std::to_string(i))}});
    REQUIRE_MESSAGE(r.contains("result"), r.dump());
  }
  std::set<std::string> seen;
  int sessions = 0;
  while (seen.size() < results && sessions < 3 * static_cast<int>(results)) {
    ++sessions;
    raw_client parent(d.socket());
    REQUIRE(parent.call("initialize", {{"parentId", "p"}})["result"]["parentId"] == "p");
    parent.notify("parent/state", {{"parentId", "p"}, {"state", "idle"}});
    for (;;) {
      // Generous: a delivery comes within milliseconds; none at all is the stall.
      const std::optional<std::string> frame = parent.read_frame(std::chrono::seconds(15));
      REQUIRE_MESSAGE(frame.has_value(), "nothing delivered after reconnect ", sessions, "; ", seen.size(), " of ",
                      results, " seen");
      const json m = json::parse(*frame);
      if (m.value("method", "") == "context/usage") {
        parent.send({{"jsonrpc", "2.0"}, {"id", m["id"]}, {"result", nullptr}});
        continue;
      }
      REQUIRE_MESSAGE(m.value("method", "") == "parent/deliver", m.dump());
      for (const auto& s : m["params"]["sections"]) seen.insert(s["childId"].get<std::string>());
      parent.send({{"jsonrpc", "2.0"}, {"id", m["id"]}, {"result", json::object()}});
      break;  // and hang up at once
    }
  }
  CHECK(seen.size() == results);
  CHECK(sessions > 1);
}

// The run whose drain first stalled on the reconnect above (the interleaving, not the seed
// alone, decided it; kept for its choices).
TEST_CASE("crash loop with seed 1089180670, 40 rounds") {
  run_options o;
  o.seed = 1089180670;
  o.rounds = 40;
  check_crash_loop(o);
}

TEST_CASE("kill -9 at random moments under load: every acknowledged completion delivered, none twice after its acknowledgement") {
  check_crash_loop(options_from_env(std::random_device{}()));
}
