#include "upkeep/store_hygiene.hpp"

#include <algorithm>
#include <stdexcept>

#include "config.hpp"
#include "engine/fs/posix_io.hpp"
#include "engine/fs/private_dir.hpp"

namespace handoff::daemon {
namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::seconds;

// The sha256s the queue references now (see store_hygiene.hpp): what it holds, and what its
// tombstones name.
sha256_set queue_references(const pending_queue& queue, std::int64_t delivered_since_unix_ms,
                            std::vector<std::string>& problems) {
  sha256_set refs;
  for (std::string& sha : queue.held_texts()) refs.insert(std::move(sha));
  for (std::string& sha : queue.delivered_texts(delivered_since_unix_ms, problems)) refs.insert(std::move(sha));
  return refs;
}

bool queue_holds_text(const pending_queue& queue, std::string_view sha256) { return queue.holds_text(sha256); }

}  // namespace

hygiene_settings hygiene_settings::from(const config& cfg) {
  hygiene_settings s;
  s.limits.max_age = std::chrono::hours(24) * cfg.gc_max_age_days;
  s.limits.max_bytes = cfg.gc_max_bytes;
  s.keep_delivered = seconds(cfg.gc_keep_delivered_s);
  return s;
}

hygiene_settings hygiene_settings::temps_only() {
  hygiene_settings s;
  s.limits = gc_limits::temps_only();
  s.expire_tombstones = false;
  return s;
}

hygiene_report collect_garbage(const std::filesystem::path& store_dir, pending_queue& queue,
                               const hygiene_settings& settings, bool dry_run,
                               std::chrono::system_clock::time_point now) {
  const unique_fd dir = open_private_dir(store_dir, "artifact dir");
  return collect_garbage(dir.get(), queue, settings, dry_run, now);
}

hygiene_report collect_garbage(int dir_fd, pending_queue& queue, const hygiene_settings& settings, bool dry_run,
                               std::chrono::system_clock::time_point now) {
  hygiene_report r;
  r.dry_run = dry_run;
  r.settings = settings;
  const auto since = duration_cast<milliseconds>((now - settings.keep_delivered).time_since_epoch()).count();
  const sha256_set refs = queue_references(queue, since, r.problems);
  r.plan = plan_gc(dir_fd, now, settings.limits, refs);
  if (dry_run) return r;

  r.outcome = apply_gc(dir_fd, r.plan, [&queue](std::string_view sha) { return queue_holds_text(queue, sha); });
  r.problems.insert(r.problems.end(), r.outcome.problems.begin(), r.outcome.problems.end());
  // A tombstone lives as long as what it protects: resends are recognised for as long as their
  // artifact may be kept.
  if (settings.expire_tombstones)
    r.tombstones_expired = queue.expire_tombstones(std::max(settings.limits.max_age, settings.keep_delivered));
  return r;
}

namespace {

struct tally {
  std::size_t files = 0;
  std::uint64_t bytes = 0;
};

// Artifacts among `entries` (temps are not part of the store's size).
tally artifacts_in(const std::vector<gc_entry>& entries) {
  tally t;
  for (const gc_entry& e : entries) {
    if (e.sha256.empty()) continue;
    ++t.files;
    t.bytes += e.bytes;
  }
  return t;
}

}  // namespace

rpc::gc_result to_wire(const hygiene_report& r) {
  const gc_plan& plan = r.plan;
  // A dry run reports what the plan would remove; a real run what it did remove.
  const std::vector<gc_entry>& gone = r.dry_run ? plan.remove : r.outcome.removed;
  rpc::gc_result out;
  out.dry_run = r.dry_run;
  for (const gc_entry& e : gone) {
    out.removed.push_back({e.name, e.sha256.empty() ? std::nullopt : std::optional<std::string>(e.sha256), e.bytes,
                           e.mtime_unix_s, std::string(to_string(e.reason))});
    out.removed_bytes += e.bytes;
  }
  // Planned artifacts the removal skipped (changed or referenced meanwhile) are still there.
  const tally planned = artifacts_in(plan.remove), taken = artifacts_in(gone);
  out.kept_files = plan.kept_files + planned.files - taken.files;
  out.kept_bytes = plan.kept_bytes + planned.bytes - taken.bytes;
  out.protected_files = plan.protected_files;
  out.protected_bytes = plan.protected_bytes;
  out.over_quota = out.kept_bytes > r.settings.limits.max_bytes;
  out.ignored = plan.ignored;
  out.skipped = r.outcome.skipped;
  out.tombstones_expired = r.tombstones_expired;
  out.max_age_s = r.settings.limits.max_age.count();
  out.max_bytes = r.settings.limits.max_bytes;
  out.keep_delivered_s = r.settings.keep_delivered.count();
  out.problems = r.problems;
  return out;
}

rpc::store_status store_status(const std::filesystem::path& store_dir) {
  rpc::store_status out;
  out.dir = store_dir.string();
  try {
    const unique_fd dir = open_private_dir(store_dir, "artifact dir");
    const store_usage usage = measure_store(dir.get());
    out.files = usage.files;
    out.bytes = usage.bytes;
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

}  // namespace handoff::daemon
