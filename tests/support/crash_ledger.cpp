#include "support/crash_ledger.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "engine/fs/sha256.hpp"

namespace handoff::test {
namespace {

// Words of 1 to 4 bytes per character: a cut that lands inside one shows as invalid UTF-8.
constexpr std::array<std::string_view, 10> words = {"alpha", "beta", "gamma", "délta", "漢字",
                                                    "テスト", "🙂", "naïve", "x", "result"};

// FNV-1a over the ids, mixed with the seed: one generator per pair, whatever thread asks.
std::uint64_t pair_seed(std::uint64_t seed, const std::string& parent_id, const std::string& child_id) {
  std::uint64_t h = 0xcbf29ce484222325ULL ^ seed;
  for (const std::string* s : {&parent_id, &child_id}) {
    for (const unsigned char ch : *s) h = (h ^ ch) * 0x100000001b3ULL;
    h = (h ^ 0xff) * 0x100000001b3ULL;
  }
  return h;
}

std::size_t between(std::mt19937_64& rng, std::size_t lo, std::size_t hi) {
  return std::uniform_int_distribution<std::size_t>(lo, hi)(rng);
}

std::string key_text(const crash_ledger::pair_id& p) { return p.first + "/" + p.second; }

}  // namespace

planned_completion plan_completion(std::uint64_t seed, const std::string& parent_id,
                                   const std::string& child_id) {
  std::mt19937_64 rng(pair_seed(seed, parent_id, child_id));
  planned_completion c;
  c.parent_id = parent_id;
  c.child_id = child_id;
  c.title = "task " + child_id;
  const std::size_t status = between(rng, 0, 9);
  c.status = status < 8 ? "done" : status == 8 ? "error" : "cancelled";
  if (c.status == "error") c.error = "exit code " + std::to_string(between(rng, 1, 255));

  // Under the per-result caps (delivered whole), above them (cut, artifact), or over 600 lines.
  std::size_t target_bytes = 0, line_bytes = 0;
  const std::size_t kind = between(rng, 0, 99);
  if (kind < 45) {
    target_bytes = between(rng, 1, 2000), line_bytes = between(rng, 10, 120);
  } else if (kind < 70) {
    target_bytes = between(rng, 2048, 20 * 1024), line_bytes = between(rng, 20, 200);
  } else if (kind < 90) {
    target_bytes = between(rng, 25 * 1024, 160 * 1024), line_bytes = between(rng, 40, 400);
  } else if (kind < 96) {
    target_bytes = between(rng, 6000, 12000), line_bytes = between(rng, 3, 12);
  } else {
    // Either side of the queue's file_text_bytes (1 MiB): inline in the journal, or a file.
    target_bytes = between(rng, 200 * 1024, 1300 * 1024), line_bytes = between(rng, 60, 2000);
  }
  std::string& t = c.final_text;
  t = "BEGIN " + child_id;
  for (std::size_t line = 1; t.size() < target_bytes; ++line) {
    t += '\n';
    const std::size_t end = t.size() + line_bytes;
    t += std::to_string(line);
    while (t.size() < end) {
      t += ' ';
      t += words[between(rng, 0, words.size() - 1)];
    }
  }
  t += "\nEND " + child_id;
  c.sha256 = sha256_hex(t);
  return c;
}

void crash_ledger::note(std::string what) {
  // Bounded: a broken daemon must not make the report unreadable.
  if (violations_.size() < 50) violations_.push_back(std::move(what));
  else ++violations_dropped_;
}

void crash_ledger::violation(std::string what) {
  std::lock_guard lock(mutex_);
  note(std::move(what));
}

void crash_ledger::sent(const planned_completion& c) {
  std::lock_guard lock(mutex_);
  auto [it, fresh] = pairs_.try_emplace(pair_id{c.parent_id, c.child_id});
  pair_record& r = it->second;
  if (fresh) {
    r.sha256 = c.sha256;
    r.title = c.title;
    r.status = c.status;
    r.error = c.error;
    r.bytes = c.final_text.size();
  }
  ++r.attempts;
  ++counts_.attempts;
}

void crash_ledger::acknowledged(const planned_completion& c, const rpc::completed_result& result) {
  std::lock_guard lock(mutex_);
  const pair_id id{c.parent_id, c.child_id};
  pair_record& r = pairs_.at(id);
  if (result.sha256 != c.sha256 || result.bytes != c.final_text.size())
    note("completed " + key_text(id) + " answered sha256 " + result.sha256 + " / " +
         std::to_string(result.bytes) + " bytes for a text of " + c.sha256 + " / " +
         std::to_string(c.final_text.size()) + " bytes");
  if (!r.acknowledged) {
    if (result.duplicate && r.attempts < 2)
      note("completed " + key_text(id) + " answered duplicate on its first attempt");
    r.acknowledged = true;
    ++counts_.acknowledged;
    counts_.cut_attempts += r.attempts - 1;
  } else if (!result.duplicate) {
    note("completed " + key_text(id) + " sent again after its acknowledgement was not a duplicate");
  }
  if (result.duplicate) ++counts_.duplicates_answered;
}

std::optional<crash_ledger::pair_id> crash_ledger::random_acknowledged(std::mt19937_64& rng) const {
  std::lock_guard lock(mutex_);
  if (pairs_.empty()) return std::nullopt;
  // A few tries at random positions; the map is ordered, so walk from a random start.
  auto it = pairs_.begin();
  std::advance(it, between(rng, 0, pairs_.size() - 1));
  for (std::size_t n = 0; n < pairs_.size(); ++n, ++it) {
    if (it == pairs_.end()) it = pairs_.begin();
    if (it->second.acknowledged) return it->first;
  }
  return std::nullopt;
}

void crash_ledger::check_section(const std::string& parent_id, const rpc::section_dto& s,
                                 const pair_record& r, const std::string& where) {
  const std::string who = where + ": " + parent_id + "/" + s.child_id;
  if (s.total_bytes != r.bytes)
    note(who + " has totalBytes " + std::to_string(s.total_bytes) + ", sent " + std::to_string(r.bytes));
  if (s.status != r.status || s.error != r.error || s.title != r.title)
    note(who + " has status/error/title \"" + s.status + "\"/\"" + s.error + "\"/\"" + s.title +
         "\", sent \"" + r.status + "\"/\"" + r.error + "\"/\"" + r.title + "\"");
  if (!s.truncated) {
    if (sha256_hex(s.text) != r.sha256) note(who + " is whole but not the text that was sent");
    return;
  }
  ++counts_.truncated;
  if (!s.artifact || !s.artifact->saved || s.artifact->sha256 != r.sha256) {
    note(who + " is cut but its artifact is not the saved text that was sent");
    return;
  }
  artifacts_.emplace(s.artifact->path, s.artifact->sha256);
}

void crash_ledger::delivered(const std::string& endpoint_parent, const rpc::deliver_params& d,
                             pid_t daemon_pid) {
  std::lock_guard lock(mutex_);
  const std::string where = "delivery " + d.delivery_id;
  if (d.parent_id != endpoint_parent)
    note(where + " for parent " + d.parent_id + " reached the endpoint of " + endpoint_parent);
  if (d.batch.text.size() > d.batch.budget.batch_cap_bytes)
    note(where + " renders " + std::to_string(d.batch.text.size()) + " bytes over its cap of " +
         std::to_string(d.batch.budget.batch_cap_bytes));
  std::vector<std::string> children;
  for (const auto& s : d.batch.sections) children.push_back(s.child_id);
  const std::string text_sha = sha256_hex(d.batch.text);

  // A resend: allowed, and must be the same batch.
  if (const auto seen = deliveries_.find(d.delivery_id); seen != deliveries_.end()) {
    ++counts_.resends;
    if (seen->second.acknowledged) ++counts_.resends_after_ack;
    if (seen->second.children != children || seen->second.text_sha256 != text_sha ||
        seen->second.parent_id != d.parent_id)
      note(where + " was resent changed");
    return;
  }
  ++counts_.deliveries;
  deliveries_[d.delivery_id] = delivery_record{d.parent_id, text_sha, children, false};
  for (const auto& s : d.batch.sections) {
    ++counts_.sections;
    const pair_id id{d.parent_id, s.child_id};
    const auto it = pairs_.find(id);
    if (it == pairs_.end()) {
      note(where + " carries " + key_text(id) + ", which was never sent");
      continue;
    }
    pair_record& r = it->second;
    check_section(d.parent_id, s, r, where);
    if (!r.delivery_id.empty()) {
      const bool acked = deliveries_.at(r.delivery_id).acknowledged;
      note(where + " carries " + key_text(id) + " again: it came in " + r.delivery_id +
           (acked ? ", acknowledged before" : ", not acknowledged (a resend must keep its id)"));
    }
    if (r.wait_pid != 0) {
      if (r.owed_again || (!r.wait_settled && daemon_pid != r.wait_pid)) {
        ++counts_.wait_redelivered;
        r.owed_again = false;
      } else {
        note(where + " carries " + key_text(id) + ", which a wait had consumed for good");
      }
    }
    r.delivery_id = d.delivery_id;
    ++r.receipts;
  }
}

void crash_ledger::delivery_acknowledged(const std::string& delivery_id) {
  std::lock_guard lock(mutex_);
  deliveries_.at(delivery_id).acknowledged = true;
}

void crash_ledger::waited(const std::string& parent_id, const rpc::wait_result& result, pid_t daemon_pid) {
  std::lock_guard lock(mutex_);
  if (!result.batch.sections.empty()) ++counts_.waits_returning;
  for (const auto& s : result.batch.sections) {
    ++counts_.wait_sections;
    const pair_id id{parent_id, s.child_id};
    const auto it = pairs_.find(id);
    if (it == pairs_.end()) {
      note("a wait returned " + key_text(id) + ", which was never sent");
      continue;
    }
    pair_record& r = it->second;
    check_section(parent_id, s, r, "wait");
    if (!r.delivery_id.empty()) note("a wait returned " + key_text(id) + ", auto-delivered in " + r.delivery_id);
    if (r.wait_pid != 0) {
      if (r.owed_again) ++counts_.wait_redelivered;
      else note("a wait returned " + key_text(id) + " again, without a kill cutting its consumption");
    }
    r.wait_pid = daemon_pid;
    r.wait_settled = false;
    r.owed_again = false;
    ++r.receipts;
  }
}

std::vector<std::string> crash_ledger::owed_to_wait(const std::string& parent_id, std::size_t max) const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (auto it = pairs_.lower_bound(pair_id{parent_id, ""}); it != pairs_.end() && it->first.first == parent_id;
       ++it) {
    const pair_record& r = it->second;
    if (r.acknowledged && r.delivery_id.empty() && (r.wait_pid == 0 || r.owed_again))
      out.push_back(it->first.second);
    if (out.size() == max) break;
  }
  return out;
}

std::vector<std::string> crash_ledger::unsettled_wait_receipts(const std::string& parent_id, pid_t daemon_pid) const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (auto it = pairs_.lower_bound(pair_id{parent_id, ""}); it != pairs_.end() && it->first.first == parent_id;
       ++it) {
    const pair_record& r = it->second;
    if (r.wait_pid != 0 && r.wait_pid != daemon_pid && !r.wait_settled && !r.owed_again)
      out.push_back(it->first.second);
  }
  return out;
}

void crash_ledger::wait_receipt_settled(const std::string& parent_id, const std::string& child_id, bool still_held) {
  std::lock_guard lock(mutex_);
  pair_record& r = pairs_.at(pair_id{parent_id, child_id});
  if (still_held) {
    r.owed_again = true;
    ++counts_.wait_cut_by_kill;
  } else {
    r.wait_settled = true;
  }
}

bool crash_ledger::must_be_held(const std::string& parent_id, const std::string& child_id) const {
  std::lock_guard lock(mutex_);
  const auto it = pairs_.find(pair_id{parent_id, child_id});
  if (it == pairs_.end()) return false;
  const pair_record& r = it->second;
  return r.acknowledged && r.delivery_id.empty() && (r.wait_pid == 0 || r.owed_again);
}

std::vector<std::string> crash_ledger::violations() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out = violations_;
  if (violations_dropped_ != 0) out.push_back("... and " + std::to_string(violations_dropped_) + " more");
  return out;
}

std::vector<crash_ledger::pair_id> crash_ledger::acknowledged_pairs() const {
  std::lock_guard lock(mutex_);
  std::vector<pair_id> out;
  for (const auto& [id, r] : pairs_)
    if (r.acknowledged) out.push_back(id);
  return out;
}

std::vector<std::string> crash_ledger::undelivered() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [id, r] : pairs_)
    if (r.acknowledged && (r.receipts == 0 || r.owed_again)) out.push_back(key_text(id));
  return out;
}

std::set<std::pair<std::filesystem::path, std::string>> crash_ledger::artifacts() const {
  std::lock_guard lock(mutex_);
  return artifacts_;
}

crash_ledger::counts crash_ledger::totals() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

}  // namespace handoff::test
