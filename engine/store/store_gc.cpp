#include "engine/store/store_gc.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <tuple>

#include "engine/fs/atomic_file.hpp"
#include "engine/fs/posix_io.hpp"
#include "engine/fs/sha256.hpp"

namespace handoff {

namespace {

std::int64_t ns_of(const timespec& t) { return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

// "<64 lowercase hex>.txt" -> the hash; anything else -> "".
std::string artifact_sha256(std::string_view name) { return hash_stem(name, ".txt").value_or(""); }

// A regular file owned by us: the only kind of file GC ever considers removing. Anything else
// at a name we would use (a symlink, a FIFO, someone else's file) is not ours to delete.
std::optional<struct stat> stat_own_regular(int dir_fd, const std::string& name) {
  struct stat st {};
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) return std::nullopt;
  return st;
}

gc_entry entry_for(std::string name, std::string sha256, const struct stat& st, gc_reason reason) {
  gc_entry e;
  e.name = std::move(name);
  e.sha256 = std::move(sha256);
  e.bytes = static_cast<std::uint64_t>(st.st_size);
  e.mtime_unix_s = static_cast<std::int64_t>(st.st_mtim.tv_sec);
  e.reason = reason;
  e.dev = st.st_dev;
  e.ino = st.st_ino;
  e.mtime_ns = ns_of(st.st_mtim);
  e.ctime_ns = ns_of(st.st_ctim);
  return e;
}

std::int64_t to_ns(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

}  // namespace

gc_limits gc_limits::temps_only() noexcept {
  gc_limits l;
  l.max_age = std::chrono::seconds::max();
  l.max_bytes = std::numeric_limits<std::uint64_t>::max();
  return l;
}

std::string_view to_string(gc_reason r) noexcept {
  switch (r) {
    case gc_reason::temp: return "temp";
    case gc_reason::age: return "age";
    case gc_reason::size: return "size";
  }
  return "unknown";
}

namespace {

// The age pass over the store's names: temps past their grace and artifacts past max_age go
// into `plan.remove`, referenced ones are kept (and counted), strangers ignored. Returns the
// unprotected artifacts that survive it, for the size pass.
std::vector<gc_entry> age_pass(int dir_fd, std::int64_t temp_cutoff_ns, std::int64_t age_cutoff_ns,
                               const sha256_set& protected_sha256, gc_plan& plan) {
  std::vector<gc_entry> candidates;  // unprotected artifacts that survive the age pass
  for (std::string& name : list_names(dir_fd)) {
    const auto st = stat_own_regular(dir_fd, name);
    std::string sha = artifact_sha256(name);
    if (!st || (sha.empty() && !name.starts_with(temp_prefix))) {
      ++plan.ignored;
      continue;
    }
    if (sha.empty()) {  // a temp
      if (ns_of(st->st_mtim) < temp_cutoff_ns) plan.remove.push_back(entry_for(std::move(name), {}, *st, gc_reason::temp));
      continue;
    }
    const auto bytes = static_cast<std::uint64_t>(st->st_size);
    if (protected_sha256.contains(sha)) {
      ++plan.protected_files;
      plan.protected_bytes += bytes;
      ++plan.kept_files;
      plan.kept_bytes += bytes;
      continue;
    }
    gc_entry e = entry_for(std::move(name), std::move(sha), *st, gc_reason::age);
    if (e.mtime_ns < age_cutoff_ns) {
      plan.remove.push_back(std::move(e));
    } else {
      ++plan.kept_files;
      plan.kept_bytes += e.bytes;
      candidates.push_back(std::move(e));
    }
  }
  return candidates;
}

}  // namespace

gc_plan plan_gc(int dir_fd, std::chrono::system_clock::time_point now, const gc_limits& limits,
                const sha256_set& protected_sha256) {
  const std::int64_t now_ns = to_ns(now);
  // Saturating: max_age may be "forever" (temps_only), and now - forever must not wrap.
  const auto older_than = [now_ns](std::chrono::seconds age) {
    const std::int64_t age_s = age.count();
    const std::int64_t max_s = std::numeric_limits<std::int64_t>::max() / 1'000'000'000;
    return age_s >= max_s ? std::numeric_limits<std::int64_t>::min() : now_ns - age_s * 1'000'000'000;
  };
  const std::int64_t temp_cutoff_ns = older_than(limits.temp_grace);
  const std::int64_t age_cutoff_ns = older_than(limits.max_age);

  gc_plan plan;
  std::vector<gc_entry> candidates = age_pass(dir_fd, temp_cutoff_ns, age_cutoff_ns, protected_sha256, plan);

  // Oldest first; the name makes the order (and so the plan) deterministic on mtime ties.
  const auto oldest_first = [](const gc_entry& a, const gc_entry& b) {
    return std::tie(a.mtime_ns, a.name) < std::tie(b.mtime_ns, b.name);
  };
  std::sort(candidates.begin(), candidates.end(), oldest_first);
  for (gc_entry& e : candidates) {
    if (plan.kept_bytes <= limits.max_bytes) break;
    e.reason = gc_reason::size;
    --plan.kept_files;
    plan.kept_bytes -= e.bytes;
    plan.remove.push_back(std::move(e));
  }
  plan.over_quota = plan.kept_bytes > limits.max_bytes;

  // Temps, then age, then size; within a reason, oldest first.
  std::stable_sort(plan.remove.begin(), plan.remove.end(), [&](const gc_entry& a, const gc_entry& b) {
    if (a.reason != b.reason) return a.reason < b.reason;
    return oldest_first(a, b);
  });
  return plan;
}

gc_outcome apply_gc(int dir_fd, const gc_plan& plan, const still_referenced_fn& still_referenced) {
  gc_outcome out;
  for (const gc_entry& e : plan.remove) {
    const auto st = stat_own_regular(dir_fd, e.name);
    const bool same_file = st && st->st_dev == e.dev && st->st_ino == e.ino &&
                           static_cast<std::uint64_t>(st->st_size) == e.bytes &&
                           ns_of(st->st_mtim) == e.mtime_ns && ns_of(st->st_ctim) == e.ctime_ns;
    if (!same_file || (!e.sha256.empty() && still_referenced && still_referenced(e.sha256))) {
      ++out.skipped;
      continue;
    }
    if (::unlinkat(dir_fd, e.name.c_str(), 0) != 0) {
      if (errno == ENOENT) {
        ++out.skipped;
      } else {
        out.problems.push_back("cannot remove " + e.name + ": " + std::strerror(errno));
      }
      continue;
    }
    out.removed.push_back(e);
  }
  // Durability of a removal is not needed for correctness (a file that comes back after a
  // crash is collected next time), but it keeps the reported usage true across a power loss.
  if (!out.removed.empty()) sync_quietly(dir_fd);
  return out;
}

store_usage measure_store(int dir_fd) {
  store_usage usage;
  for (const std::string& name : list_names(dir_fd)) {
    if (artifact_sha256(name).empty()) continue;
    if (const auto st = stat_own_regular(dir_fd, name)) {
      ++usage.files;
      usage.bytes += static_cast<std::uint64_t>(st->st_size);
    }
  }
  return usage;
}

}  // namespace handoff
