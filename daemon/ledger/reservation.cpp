// A reservation's hand-back (ledger.hpp): what it still holds returns to the pool when dropped.
#include <algorithm>

#include "ledger/ledger.hpp"

namespace handoff::daemon {

reservation::reservation(reservation&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)),
      parent_id_(std::move(other.parent_id_)),
      held_(std::move(other.held_)) {}

reservation& reservation::operator=(reservation&& other) noexcept {
  if (this != &other) {
    release();
    owner_ = std::exchange(other.owner_, nullptr);
    parent_id_ = std::move(other.parent_id_);
    held_ = std::move(other.held_);
  }
  return *this;
}

reservation::~reservation() { release(); }

std::vector<std::uint64_t> reservation::seqs() const {
  std::vector<std::uint64_t> out;
  out.reserve(held_.size());
  for (const auto& h : held_) out.push_back(h.seq);
  return out;
}

void reservation::keep_only(const std::vector<std::uint64_t>& admitted) {
  std::vector<held_result> back;
  std::erase_if(held_, [&](const held_result& h) {
    if (std::find(admitted.begin(), admitted.end(), h.seq) != admitted.end()) return false;
    back.push_back(h);
    return true;
  });
  if (owner_ != nullptr && !back.empty()) owner_->give_back(parent_id_, back);
}

void reservation::absorb(reservation&& other) {
  if (other.held_.empty()) return;
  if (owner_ == nullptr) {
    *this = std::move(other);
    return;
  }
  held_.insert(held_.end(), other.held_.begin(), other.held_.end());
  other.held_.clear();
  other.owner_ = nullptr;
  std::sort(held_.begin(), held_.end(), [](const held_result& a, const held_result& b) { return a.seq < b.seq; });
}

void reservation::release() {
  if (owner_ != nullptr && !held_.empty()) owner_->give_back(parent_id_, held_);
  held_.clear();
  owner_ = nullptr;
}

}  // namespace handoff::daemon
