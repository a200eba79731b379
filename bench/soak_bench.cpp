// Soak: one handoffd serving many parent sessions in turn, the way a machine's Pi sessions come
// and go over months. Each parent connects as its own endpoint, has 8 children of 1-64 KiB
// completed, takes half of them with subagent/wait and the other half by auto-delivery, and
// hangs up. Its memory must not stay behind: RSS, open fds and daemon/status `parents` are
// sampled every --sample-every parents and must stay flat.
//
// Simulated time: the daemon runs with a short --forget-after-ms (default here 200 ms instead of
// an hour), so the forgetting a real daemon does an hour after a session ends happens within the
// run. Nothing else depends on the grace, so a parent's life is the same as with the default,
// compressed. The auto-delivery coalescing delay is 0 (see main). The 64 texts repeat (content-addressed), so the store holds at most 64 artifacts
// and the disk does not fill; what grows on disk is the queue's tombstones (one small file per
// delivered child, expired by the periodic collection after a day).
//
// Checks at the end (exit 1 when one fails): RSS <= --rss-budget-mib, open fds back to the
// baseline, and `parents` back to at most --parents-left once the grace has passed.
#include <dirent.h>

#include <iostream>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "bench_daemon.hpp"
#include "e2e_support.hpp"
#include "handoff/client.hpp"
#include "handoff/parent_endpoint.hpp"

namespace hb = handoff::bench;
namespace hc = handoff::client;
namespace rpc = handoff::rpc;

namespace {

struct settings : hb::daemon_options {
  std::size_t parents = 100'000;
  std::size_t children = 8;             // per parent; the first half waited for, the rest auto-delivered
  std::size_t sample_every = 10'000;
  std::uint64_t forget_after_ms = 200;  // the simulated hour
  double rss_budget_mib = 32;
  std::size_t parents_left = 2;         // "about zero": a sweep may be a tick behind
};

constexpr std::size_t distinct_texts = 64;  // sizes 1..64 KiB

std::size_t open_fds(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = ::opendir(path.c_str());
  if (d == nullptr) throw std::runtime_error("cannot list " + path);
  std::size_t n = 0;
  while (const dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n;
}

struct sample {
  std::size_t parents_done = 0;
  double seconds = 0;
  hb::process_memory memory;
  std::size_t fds = 0;
  std::size_t known_parents = 0;
  std::size_t tombstones = 0;
};

std::string mib(std::size_t kib) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(kib) / 1024.0);
  return buf;
}

// One parent's whole session, on its own endpoint connection; `worker` completes the children.
void run_parent(const hc::options& opts, hc::connection& worker, const std::vector<std::string>& texts,
                std::size_t index, std::size_t children) {
  const std::string parent_id = "soak-" + std::to_string(index);
  hc::connection pc(opts);
  std::size_t sections = 0;
  hc::parent_callbacks on;
  on.deliver = [&](const rpc::deliver_params& d) { sections += d.batch.sections.size(); };
  hc::parent_endpoint endpoint(pc, parent_id, on, "soak");
  auto complete = [&](std::size_t k) {
    rpc::completed_params done;
    done.parent_id = parent_id;
    done.child_id = "child-" + std::to_string(k);
    done.status = "done";
    done.final_text = texts[(index * children + k) % texts.size()];
    worker.completed(done);
    return done.child_id;
  };
  const std::size_t waited = children / 2;
  rpc::wait_params wait;
  wait.parent_id = parent_id;
  for (std::size_t k = 0; k < waited; ++k) wait.child_ids.push_back(complete(k));
  // Waited on the endpoint's own connection: the daemon does not ask it for usage meanwhile.
  const auto answer = pc.wait(wait);
  if (answer.batch.sections.size() + answer.batch.deferred != waited)
    throw std::runtime_error(parent_id + ": the wait returned " + std::to_string(answer.batch.sections.size()));
  std::size_t expected = children - answer.batch.sections.size();
  for (std::size_t k = waited; k < children; ++k) complete(k);
  endpoint.report_idle();
  const auto give_up = hb::bench_clock::now() + std::chrono::seconds(30);
  while (sections < expected) {
    if (hb::bench_clock::now() > give_up) throw std::runtime_error(parent_id + ": auto-delivery never came");
    pc.serve_one(std::chrono::milliseconds(1000));
  }
}  // the parent hangs up here

sample take(const hb::bench_daemon& daemon, hc::connection& c, std::size_t done, hb::bench_clock::time_point began) {
  const auto status = c.daemon_status();
  sample s;
  s.parents_done = done;
  s.seconds = std::chrono::duration<double>(hb::bench_clock::now() - began).count();
  s.memory = daemon.memory();
  s.fds = open_fds(daemon.pid());
  s.known_parents = status.parents;
  s.tombstones = status.queue.tombstones;
  return s;
}

std::vector<std::string> row(const std::string& what, const sample& s, std::size_t baseline_fds) {
  return {what, std::to_string(s.parents_done), hb::format_us(s.seconds * 1e6), mib(s.memory.rss_kib),
          mib(s.memory.anon_kib), std::to_string(s.fds) + " (" + (s.fds >= baseline_fds ? "+" : "") +
          std::to_string(static_cast<long>(s.fds) - static_cast<long>(baseline_fds)) + ")",
          std::to_string(s.known_parents), std::to_string(s.tombstones)};
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  CLI::App app{"handoff soak: many parent sessions in turn; memory, fds and parents must stay flat"};
  hb::add_daemon_options(app, s, argv[0]);
  app.add_option("--parents", s.parents, "Parent sessions, one after another")->capture_default_str();
  app.add_option("--children", s.children, "Children per parent (half waited, half auto-delivered)")
      ->capture_default_str();
  app.add_option("--sample-every", s.sample_every, "Sample every this many parents")->capture_default_str();
  app.add_option("--forget-after-ms", s.forget_after_ms, "The daemon's grace before forgetting (simulated hour)")
      ->capture_default_str();
  app.add_option("--rss-budget-mib", s.rss_budget_mib, "RSS allowed at the end")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (s.children < 2 || s.sample_every == 0) {
    std::cerr << "soak: --children must be >= 2 and --sample-every >= 1\n";
    return 2;
  }

  try {
    std::vector<std::string> texts;
    for (std::size_t k = 1; k <= distinct_texts; ++k) texts.push_back(hb::report_text(k * 1024, 9'000'000 + k));
    // No coalescing delay: a parent reports idle only after all its completions, so the batch is
    // the same, and the run is not 50 ms of sleep per parent.
    hb::bench_daemon daemon(s.handoffd, s.dir,
                            {"--forget-after-ms", std::to_string(s.forget_after_ms), "--flush-delay-ms", "0"});
    std::cout << "## handoff soak\n\n";
    hb::print_environment(daemon.dir(), s.handoffd);
    hc::options opts;
    opts.socket = daemon.socket();
    hc::connection observer(opts);
    hc::connection worker(opts);
    const auto began = hb::bench_clock::now();
    const sample baseline = take(daemon, observer, 0, began);
    std::vector<std::vector<std::string>> rows{row("start", baseline, baseline.fds)};
    for (std::size_t i = 0; i < s.parents; ++i) {
      run_parent(opts, worker, texts, i, s.children);
      if ((i + 1) % s.sample_every == 0) rows.push_back(row("running", take(daemon, observer, i + 1, began), baseline.fds));
    }
    // Past the grace and a sweep or two, everything the run left should be forgotten.
    std::this_thread::sleep_for(std::chrono::milliseconds(2 * s.forget_after_ms + 100));
    const sample last = take(daemon, observer, s.parents, began);
    rows.push_back(row("after the grace", last, baseline.fds));
    hb::print_table({"when", "parents done", "elapsed", "VmRSS", "RssAnon", "open fds", "status parents",
                     "tombstones"}, rows);
    const double seconds = last.seconds;
    std::cout << "\n" << s.parents << " parents x " << s.children << " children (1-64 KiB) in "
              << hb::format_us(seconds * 1e6) << ": " << static_cast<double>(s.parents) / seconds
              << " parents/s; peak RSS (VmHWM) " << mib(last.memory.hwm_kib) << ".\n\n";
    bool ok = true;
    if (static_cast<double>(last.memory.rss_kib) > s.rss_budget_mib * 1024) {
      std::cout << "FAIL: RSS " << mib(last.memory.rss_kib) << " over the budget of " << s.rss_budget_mib << " MiB\n";
      ok = false;
    }
    if (last.fds != baseline.fds) {
      std::cout << "FAIL: " << last.fds << " open fds, baseline " << baseline.fds << "\n";
      ok = false;
    }
    if (last.known_parents > s.parents_left) {
      std::cout << "FAIL: the daemon still knows " << last.known_parents << " parents after the grace\n";
      ok = false;
    }
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "soak benchmark failed: " << e.what() << '\n';
    return 1;
  }
}
