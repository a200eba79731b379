// The queue's in-memory index: every change keeps the segment counts and text uses in step, so
// that recovery and the writer share one set of rules.
#include "engine/queue/queue_index.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

namespace handoff {

void queue_index::hold(const std::string& key, entry e) {
  auto [it, fresh] = by_key_.try_emplace(key, std::move(e));  // `e` is left alone when not fresh
  if (!fresh) {
    const entry& was = it->second;
    key_by_seq_.erase(was.held.seq);
    left(was.where.segment);
    drop_text_use(was.held.sha256);
    it->second = std::move(e);
  }
  const entry& now = it->second;
  add_text_use(now.held.sha256, now.held.shape.bytes);
  ++live_[now.where.segment];
  key_by_seq_.insert_or_assign(now.held.seq, key);
}

const queue_index::entry* queue_index::find(const std::string& key) const {
  const auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : &it->second;
}

const queue_index::entry* queue_index::find(std::uint64_t seq) const {
  const std::string* key = key_of(seq);
  return key == nullptr ? nullptr : find(*key);
}

const std::string* queue_index::key_of(std::uint64_t seq) const {
  const auto k = key_by_seq_.find(seq);
  return k == key_by_seq_.end() ? nullptr : &k->second;
}

std::optional<queue_index::released> queue_index::release(std::uint64_t seq) {
  const auto k = key_by_seq_.find(seq);
  if (k == key_by_seq_.end()) return std::nullopt;
  auto node = by_key_.extract(k->second);
  key_by_seq_.erase(k);
  return released{std::move(node.key()), std::move(node.mapped())};
}

void queue_index::drop(std::uint64_t seq) {
  if (const auto r = release(seq)) {
    left(r->e.where.segment);
    drop_text_use(r->e.held.sha256);
  }
}

void queue_index::left(std::uint64_t segment) {
  const auto it = live_.find(segment);
  if (it != live_.end() && it->second != 0) --it->second;
}

void queue_index::refused(std::uint64_t segment) { ++stuck_[segment]; }

void queue_index::add_text_use(const std::string& sha256, std::size_t bytes) {
  text_ref& r = text_refs_[sha256];
  if (r.uses++ == 0) {
    r.bytes = bytes;
    text_bytes_ += bytes;
  }
}

bool queue_index::drop_text_use(const std::string& sha256) {
  const auto it = text_refs_.find(sha256);
  if (it == text_refs_.end() || --it->second.uses > 0) return false;
  text_bytes_ -= it->second.bytes;
  text_refs_.erase(it);
  return true;
}

void queue_index::add_delivery(stored_delivery d, std::uint64_t segment) {
  const auto [it, fresh] = deliveries_.try_emplace(d.delivery_id);
  if (!fresh) left(it->second.second);  // sent again: the later entry is the one replayed
  it->second = {std::move(d), segment};
  ++live_[segment];
}

const stored_delivery* queue_index::delivery(const std::string& id) const {
  const auto it = deliveries_.find(id);
  return it == deliveries_.end() ? nullptr : &it->second.first;
}

std::optional<std::uint64_t> queue_index::end_delivery(const std::string& id) {
  const auto it = deliveries_.find(id);
  if (it == deliveries_.end()) return std::nullopt;
  const std::uint64_t segment = it->second.second;
  deliveries_.erase(it);
  return segment;
}

void queue_index::prune_deliveries() {
  for (auto it = deliveries_.begin(); it != deliveries_.end();) {
    std::erase_if(it->second.first.seqs, [&](std::uint64_t seq) { return !key_by_seq_.contains(seq); });
    if (it->second.first.seqs.empty()) {
      left(it->second.second);
      it = deliveries_.erase(it);
    } else {
      ++it;
    }
  }
}

void queue_index::append_texts(std::vector<std::string>& out) const {
  for (const auto& [sha, ref] : text_refs_) out.push_back(sha);
}

std::vector<std::string> queue_index::file_texts() const {
  std::vector<std::string> out;
  for (const auto& [key, e] : by_key_)
    if (e.where.place == text_place::in_file) out.push_back(e.held.sha256);
  return out;
}

std::size_t queue_index::live(std::uint64_t segment) const {
  const auto it = live_.find(segment);
  return it == live_.end() ? 0 : it->second;
}

std::size_t queue_index::stuck(std::uint64_t segment) const {
  const auto it = stuck_.find(segment);
  return it == stuck_.end() ? 0 : it->second;
}

bool queue_index::forget_segment(std::uint64_t segment) {
  if (live(segment) != 0 || stuck(segment) != 0) return false;
  live_.erase(segment);
  stuck_.erase(segment);
  return true;
}

bool queue_index::move(const std::string& key, std::uint64_t seq, std::uint64_t segment, std::size_t text_offset) {
  const auto it = by_key_.find(key);
  if (it == by_key_.end() || it->second.held.seq != seq) return false;
  left(it->second.where.segment);
  ++live_[segment];
  it->second.where.segment = segment;
  it->second.where.text_offset = text_offset;
  return true;
}

bool queue_index::move_delivery(const std::string& id, std::uint64_t segment) {
  const auto it = deliveries_.find(id);
  if (it == deliveries_.end()) return false;
  left(it->second.second);
  ++live_[segment];
  it->second.second = segment;
  return true;
}

std::vector<std::string> queue_index::keys() const {
  std::vector<std::string> out;
  out.reserve(by_key_.size());
  for (const auto& [key, e] : by_key_) out.push_back(key);
  return out;
}

std::vector<held_result> queue_index::results_by_seq() const {
  std::vector<held_result> out;
  out.reserve(by_key_.size());
  for (const auto& [key, e] : by_key_) out.push_back(e.held);
  std::sort(out.begin(), out.end(), [](const held_result& a, const held_result& b) { return a.seq < b.seq; });
  return out;
}

std::vector<stored_delivery> queue_index::deliveries_in_order() const {
  std::vector<stored_delivery> out;
  out.reserve(deliveries_.size());
  for (const auto& [id, d] : deliveries_) out.push_back(d.first);
  std::sort(out.begin(), out.end(), [](const stored_delivery& a, const stored_delivery& b) {
    return std::tie(a.seqs.front(), a.delivery_id) < std::tie(b.seqs.front(), b.delivery_id);
  });
  return out;
}

}  // namespace handoff
