// pending_queue::recover(): rebuilds the queue's memory by replaying the journal, cuts the tail
// a crash tore, and removes what nothing uses any more. Every removal is reported in `problems`.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "engine/fs/atomic_file.hpp"
#include "engine/queue/journal_entry.hpp"
#include "engine/queue/pending_queue.hpp"
#include "engine/queue/queue_disk.hpp"
#include "engine/queue/queue_files.hpp"
#include "engine/fs/sha256.hpp"

namespace handoff {

namespace {

bool is_temp(std::string_view name) { return name.starts_with(temp_prefix); }

// Removes the temp files a crash left in a directory (writes publish by rename, so a temp file
// is never the only copy of anything) and returns the other names.
std::vector<std::string> names_after_temps(int fd, const std::string& area, std::vector<std::string>& notes) {
  std::vector<std::string> out;
  for (std::string& name : list_names(fd)) {
    if (!is_temp(name)) {
      out.push_back(std::move(name));
      continue;
    }
    std::string err = remove_name(fd, name, area + "/" + name);
    notes.push_back(err.empty() ? "removed " + area + "/" + name + ", a temp file left by a crash" : std::move(err));
  }
  return out;
}

}  // namespace

pending_queue::recovered pending_queue::recover(std::vector<std::string>* problems) {
  std::lock_guard lock(mutex_);
  if (recovered_) throw std::logic_error("pending_queue::recover() called twice");
  std::vector<std::string> notes;
  std::uint64_t max_seq = 0;
  try {
    names_after_temps(dir_fd_.get(), dir_.filename().string(), notes);  // the expiry time's temp file
    count_tombstones(notes);
    replay(notes, max_seq);
    journal_.start_appending();
    migrate_legacy(notes, max_seq);
    count_live();
    settle_texts(notes);
  } catch (const fs_error& e) {
    throw queue_error(std::string("cannot recover the queue in ") + dir_.string() + ": " + e.what());
  }
  for (const std::string& name : journal_.strangers())
    notes.push_back("left alone journal/" + name + ": not a file the queue writes");

  next_seq_ = max_seq + 1;
  recovered_ = true;
  journal_bytes_ = journal_.total_bytes();
  publish_stats();
  recovered out;
  for (const auto& [key, e] : by_key_) out.results.push_back(e.held);
  std::sort(out.results.begin(), out.results.end(),
            [](const held_result& a, const held_result& b) { return a.seq < b.seq; });
  for (const auto& [id, d] : deliveries_) out.deliveries.push_back(d.first);
  // In the order they were sent, as near as the seqs tell.
  std::sort(out.deliveries.begin(), out.deliveries.end(), [](const stored_delivery& a, const stored_delivery& b) {
    return std::tie(a.seqs.front(), a.delivery_id) < std::tie(b.seqs.front(), b.delivery_id);
  });
  if (problems != nullptr) problems->insert(problems->end(), notes.begin(), notes.end());
  return out;
}

void pending_queue::count_tombstones(std::vector<std::string>& notes) {
  for (const std::string& name : names_after_temps(done_fd_.get(), "done", notes)) {
    if (!is_sha256_hex(name)) {
      notes.push_back("left alone done/" + name + ": not a file the queue writes");
      continue;
    }
    ++tombstone_count_;
  }
}

void pending_queue::replay(std::vector<std::string>& notes, std::uint64_t& max_seq) {
  const std::vector<std::uint64_t> segments = journal_.segments();
  replay_state state{notes, max_seq, {}, {}, {}};
  for (std::size_t i = 0; i < segments.size(); ++i) replay_segment(segments[i], i + 1 == segments.size(), state);
  for (const auto& [seq, shown] : state.textless) {
    const auto k = key_by_seq_.find(seq);
    if (k == key_by_seq_.end()) continue;  // retired later on: nothing is lost
    const std::string sha = by_key_.at(k->second).held.sha256;
    notes.push_back("dropped the completion " + shown + ": its text texts/" + sha + ".txt is missing or does not match its hash");
    by_key_.erase(k->second);
    key_by_seq_.erase(k);
  }
  settle_tombstones(state);
}

// What is held and unacknowledged, counted against the segments it lives in.
void pending_queue::count_live() {
  // Deliveries go on with the results still held; one with none left is done with.
  for (auto it = deliveries_.begin(); it != deliveries_.end();) {
    std::erase_if(it->second.first.seqs, [&](std::uint64_t seq) { return !key_by_seq_.contains(seq); });
    if (it->second.first.seqs.empty()) {
      it = deliveries_.erase(it);
    } else {
      ++live_[it->second.second];
      ++it;
    }
  }
  for (const auto& [key, e] : by_key_) {
    ++live_[e.where.segment];
    add_text_use(e.held.sha256, e.held.shape.bytes);
  }
}

// One segment, entry by entry; the first entry that does not check out ends it, and the segment
// is cut there. Zeros where an entry would start, to the end of the file, are the space
// journal::zero_ahead() wrote: the entries end there, nothing is cut. A put whose text does not
// match its hash with only zeros after it is the tail of a group a crash interrupted (its
// header reached the disk, its text did not): cut too. Elsewhere such a put is dropped alone.
void pending_queue::replay_segment(std::uint64_t segment, bool last, replay_state& state) {
  const std::string shown = "journal/" + segment_name(segment);
  const std::size_t size = journal_.segment_size(segment);
  const mapped_file whole(journal_.segment_fd(segment), 0, size);
  const std::string_view bytes = whole.view();
  const auto zeros_from = [&](std::size_t from) {
    return std::all_of(bytes.begin() + static_cast<std::ptrdiff_t>(std::min(from, bytes.size())), bytes.end(),
                       [](char c) { return c == '\0'; });
  };
  const auto cut = [&](std::size_t at, const std::string& why) {
    state.notes.push_back("cut " + shown + " at byte " + std::to_string(at) + " of " + std::to_string(size) + ": " +
                          why +
                          (last ? " (the tail of a group a crash interrupted; none of it was acknowledged)"
                                : " (a damaged segment: what follows is lost)"));
    journal_.cut(segment, at);
  };
  std::size_t at = 0;
  while (at < bytes.size()) {
    std::string why;
    const auto e = decode_entry(bytes, at, why);
    if (!e) {
      if (zeros_from(at)) return journal_.end_at(segment, at);
      return cut(at, why);
    }
    const std::string where = shown + " at byte " + std::to_string(at);
    if (!replay_entry(*e, bytes, segment, where, state)) {
      if (zeros_from(e->next)) return cut(at, "its text does not match its hash");
      state.notes.push_back("dropped the completion " + where + ": its text does not match its hash");
    }
    at = e->next;
  }
}

bool pending_queue::replay_entry(const decoded_entry& e, std::string_view bytes, std::uint64_t segment,
                                 const std::string& shown, replay_state& state) {
  std::string why;
  switch (e.kind) {
    case entry_kind::put:
      if (auto p = decode_put(e.meta, why)) return replay_put(std::move(*p), e, bytes, segment, shown, state);
      break;
    case entry_kind::retire:
      if (auto r = decode_retire(e.meta, why)) {
        state.max_seq = std::max(state.max_seq, r->t.seq);
        if (const auto it = by_key_.find(r->key); it != by_key_.end() && it->second.held.seq == r->t.seq) {
          key_by_seq_.erase(r->t.seq);
          by_key_.erase(it);
        }
        state.retired[r->key] = r->t;
        return true;
      }
      break;
    case entry_kind::delivery:
      if (auto d = decode_delivery(e.meta, why)) {
        for (const std::uint64_t seq : d->seqs) state.max_seq = std::max(state.max_seq, seq);
        std::string id = d->delivery_id;
        deliveries_[id] = {std::move(*d), segment};
        return true;
      }
      break;
    case entry_kind::mark:
      if (auto next = decode_mark(e.meta, why)) {
        state.max_seq = std::max(state.max_seq, *next - 1);
        return true;
      }
      break;
    case entry_kind::acknowledged:
      if (auto id = decode_acknowledged(e.meta, why)) {
        deliveries_.erase(*id);
        return true;
      }
      break;
  }
  state.notes.push_back("skipped the entry " + shown + ": " + why);
  return true;
}

bool pending_queue::replay_put(decoded_put p, const decoded_entry& e, std::string_view bytes, std::uint64_t segment,
                               const std::string& shown, replay_state& state) {
  held_result& r = p.held;
  const std::string key = completion_key(r.info.parent_id, r.info.child_id);
  const auto drop = [&](const std::string& why) {
    state.notes.push_back("dropped the completion " + shown + ": " + why);
    return true;
  };
  state.max_seq = std::max(state.max_seq, r.seq);
  if (const auto taken = key_by_seq_.find(r.seq); taken != key_by_seq_.end() && taken->second != key)
    return drop("its seq " + std::to_string(r.seq) + " is taken by another completion");
  location where{segment, e.text_offset, p.where};
  if (p.where == text_place::in_journal) {
    const std::string_view text = bytes.substr(e.text_offset, e.text_bytes);
    if (sha256_hex(text) != r.sha256) return false;
    r.shape = measure(text);
  } else {
    auto [it, fresh] = state.files.try_emplace(r.sha256);
    if (fresh) it->second = check_text_file(r.sha256, state.notes);
    if (it->second) {
      r.shape = *it->second;
    } else {
      // A text file goes with the last result using it, so a later retire entry may explain
      // its absence: judged once the whole journal is read.
      state.textless[r.seq] = shown;
    }
  }
  if (const auto old = by_key_.find(key); old != by_key_.end()) key_by_seq_.erase(old->second.held.seq);
  key_by_seq_[r.seq] = key;
  by_key_[key] = entry{std::move(r), where};  // a copy moved forward replaces the older one
  return true;
}

std::optional<text_shape> pending_queue::check_text_file(const std::string& sha, std::vector<std::string>& notes) {
  const std::optional<mapped_file> text = texts_.open(sha);
  if (!text) return std::nullopt;
  if (sha256_hex(text->view()) != sha) {
    const std::string name = sha + ".txt";
    std::string err = remove_name(texts_fd_.get(), name, "texts/" + name);
    notes.push_back(err.empty() ? "dropped texts/" + name + ": its content does not match its name" : std::move(err));
    return std::nullopt;
  }
  return measure(text->view());
}

// The journal says what left; done/ is the index resends are checked against. A tombstone
// file for a result the journal still holds wins (it was delivered; the retire entry went with
// a removed segment); one the journal has and done/ lacks is written again.
void pending_queue::settle_tombstones(replay_state& state) {
  for (auto it = by_key_.begin(); it != by_key_.end();) {
    if (::faccessat(done_fd_.get(), it->first.c_str(), F_OK, AT_SYMLINK_NOFOLLOW) != 0) {
      ++it;
      continue;
    }
    state.notes.push_back("dropped result " + std::to_string(it->second.held.seq) +
                          ": it was already delivered (its tombstone is in done/)");
    key_by_seq_.erase(it->second.held.seq);
    it = by_key_.erase(it);
  }
  std::string why;
  if (const auto cutoff = read_queue_file(dir_fd_.get(), std::string(expired_file), std::string(expired_file), why))
    expired_before_ms_ = std::atoll(cutoff->c_str());
  std::vector<std::pair<std::string, tombstone>> missing;
  for (const auto& [key, t] : state.retired) {
    if (by_key_.contains(key) || t.done_unix_ms <= expired_before_ms_) continue;
    if (::faccessat(done_fd_.get(), key.c_str(), F_OK, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
      missing.emplace_back(key, t);
  }
  std::vector<std::pair<std::string, tombstone>> refused;
  std::vector<std::string> why_refused;
  tombstone_count_ += file_tombstones(missing, refused, &why_refused);
  for (const auto& [key, t] : refused) unfiled_tombstones_[key] = t;  // retried before any segment goes
  for (const std::string& reason : why_refused)
    state.notes.push_back("a tombstone could not be written again (kept in memory, tried again): " + reason);
  sync_done_files();
}

// Texts no held result keeps in a file: left by a crash between a text and its entry, or by
// drops above.
void pending_queue::settle_texts(std::vector<std::string>& notes) {
  std::unordered_set<std::string> used;
  for (const auto& [key, e] : by_key_)
    if (e.where.place == text_place::in_file) used.insert(e.held.sha256);
  for (const std::string& name : names_after_temps(texts_fd_.get(), "texts", notes)) {
    const auto sha = hash_stem(name, ".txt");
    if (!sha) {
      notes.push_back("left alone texts/" + name + ": not a file the queue writes");
      continue;
    }
    if (used.contains(*sha)) continue;
    std::string err = remove_name(texts_fd_.get(), name, "texts/" + name);
    notes.push_back(err.empty() ? "dropped texts/" + name + ": no record uses it" : std::move(err));
  }
}

}  // namespace handoff
