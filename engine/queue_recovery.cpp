// pending_queue::recover(): rebuilds the queue's memory from what a previous run left on disk,
// and removes what a crash can leave half-done. Every removal is reported in `problems`.
#include <algorithm>
#include <functional>
#include <tuple>
#include <unordered_map>

#include "engine/atomic_file.hpp"
#include "engine/pending_queue.hpp"
#include "engine/queue_disk.hpp"
#include "engine/queue_files.hpp"
#include "engine/sha256.hpp"

namespace handoff {

namespace {

bool is_temp(std::string_view name) { return name.starts_with(temp_prefix); }

// One of the queue's four directories, for listing and messages.
struct area {
  int fd;
  std::string name;  // "records"
  std::string shown(std::string_view file) const { return name + "/" + std::string(file); }
};

// Calls `each` for every non-temp entry, after removing the temp files a crash left behind
// (writes publish by rename, so a temp file is never the only copy of anything).
void scan(const area& a, std::vector<std::string>& notes,
          const std::function<void(const std::string&)>& each) {
  for (const std::string& name : list_names(a.fd)) {
    if (!is_temp(name)) {
      each(name);
      continue;
    }
    std::string err = remove_name(a.fd, name, a.shown(name));
    notes.push_back(err.empty() ? "removed " + a.shown(name) + ", a temp file left by a crash"
                                : std::move(err));
  }
}

void unexpected(const area& a, const std::string& name, std::vector<std::string>& notes) {
  notes.push_back("left alone " + a.shown(name) + ": not a file the queue writes");
}

// Removes an entry that cannot be used and says why.
void drop(const area& a, const std::string& name, const std::string& why,
          std::vector<std::string>& notes) {
  std::string err = remove_name(a.fd, name, a.shown(name));
  notes.push_back(err.empty() ? "dropped " + a.shown(name) + ": " + why : std::move(err));
}

}  // namespace

pending_queue::recovered pending_queue::recover(std::vector<std::string>* problems) {
  std::lock_guard lock(mutex_);
  const publish_on_exit publish{*this};
  if (recovered_) throw std::logic_error("pending_queue::recover() called twice");
  std::vector<std::string> notes;
  std::uint64_t max_seq = 0;
  try {
    recover_tombstones(notes, max_seq);
    recover_records(notes, max_seq);
    recover_deliveries(notes, max_seq);
  } catch (const fs_error& e) {
    throw queue_error(std::string("cannot recover the queue in ") + dir_.string() + ": " +
                      e.what());
  }
  for (const int fd : {texts_fd_.get(), records_fd_.get(), deliveries_fd_.get(), done_fd_.get()}) sync_quietly(fd);

  next_seq_ = max_seq + 1;
  recovered_ = true;
  recovered out;
  for (const auto& [key, e] : by_key_) out.results.push_back(e.held);
  std::sort(out.results.begin(), out.results.end(),
            [](const held_result& a, const held_result& b) { return a.seq < b.seq; });
  for (const auto& [id, d] : deliveries_) out.deliveries.push_back(d);
  // In the order they were sent, as near as the seqs tell.
  std::sort(out.deliveries.begin(), out.deliveries.end(),
            [](const stored_delivery& a, const stored_delivery& b) {
              return std::tie(a.seqs.front(), a.delivery_id) <
                     std::tie(b.seqs.front(), b.delivery_id);
            });
  if (problems != nullptr) problems->insert(problems->end(), notes.begin(), notes.end());
  return out;
}

void pending_queue::recover_tombstones(std::vector<std::string>& notes, std::uint64_t& max_seq) {
  const area done{done_fd_.get(), "done"};
  scan(done, notes, [&](const std::string& name) {
    if (!is_sha256_hex(name)) return unexpected(done, name, notes);
    std::string why;
    const auto bytes = read_queue_file(done.fd, name, done.shown(name), why);
    const auto t = bytes ? decode_tombstone(*bytes, why) : std::nullopt;
    if (!t) return drop(done, name, why, notes);
    max_seq = std::max(max_seq, t->seq);
    ++tombstone_count_;
  });
}

void pending_queue::recover_records(std::vector<std::string>& notes, std::uint64_t& max_seq) {
  const area texts{texts_fd_.get(), "texts"};
  const area records{records_fd_.get(), "records"};
  // A text is hashed once however many records share it; nullopt = unusable, with why.
  std::unordered_map<std::string, std::pair<std::optional<text_shape>, std::string>> checked;
  const auto check_text = [&](const std::string& sha) {
    auto [it, fresh] = checked.try_emplace(sha);
    if (!fresh) return it->second;
    const std::optional<mapped_file> text = texts_.open(sha);
    if (!text) {
      it->second.second = "its text " + texts.shown(sha + ".txt") + " is missing";
    } else if (sha256_hex(text->view()) != sha) {
      it->second.second = "its text " + texts.shown(sha + ".txt") + " does not match its hash";
      drop(texts, sha + ".txt", "its content does not match its name", notes);
    } else {
      it->second.first = measure(text->view());
    }
    return it->second;
  };

  scan(records, notes, [&](const std::string& name) {
    const auto key = hash_stem(name, ".json");
    if (!key) return unexpected(records, name, notes);
    std::string why;
    const auto bytes = read_queue_file(records.fd, name, records.shown(name), why);
    std::optional<held_result> r = bytes ? decode_record(*bytes, why) : std::nullopt;
    if (!r) return drop(records, name, why, notes);
    if (completion_key(r->info.parent_id, r->info.child_id) != *key) {
      return drop(records, name, "its parent and child ids do not match its name", notes);
    }
    if (find_tombstone(*key)) {
      return drop(records, name, "it was already delivered (a crash came before its removal)",
                  notes);
    }
    if (const auto taken = key_by_seq_.find(r->seq); taken != key_by_seq_.end()) {
      return drop(records, name, "its seq is taken by " + record_file_name(taken->second),
                  notes);
    }
    const auto& [shape, text_problem] = check_text(r->sha256);
    if (!shape) return drop(records, name, text_problem, notes);
    r->shape = *shape;
    max_seq = std::max(max_seq, r->seq);
    key_by_seq_.emplace(r->seq, *key);
    ++text_refs_[r->sha256];
    by_key_.emplace(*key, entry{std::move(*r)});
  });

  // Texts no record uses: left by a crash between a text and its record, or by drops above.
  scan(texts, notes, [&](const std::string& name) {
    const auto sha = hash_stem(name, ".txt");
    if (!sha) return unexpected(texts, name, notes);
    if (!text_refs_.contains(*sha)) drop(texts, name, "no record uses it", notes);
  });
}

void pending_queue::recover_deliveries(std::vector<std::string>& notes, std::uint64_t& max_seq) {
  const area deliveries{deliveries_fd_.get(), "deliveries"};
  scan(deliveries, notes, [&](const std::string& name) {
    if (!hash_stem(name, ".json")) return unexpected(deliveries, name, notes);
    std::string why;
    const auto bytes = read_queue_file(deliveries.fd, name, deliveries.shown(name), why);
    std::optional<stored_delivery> d = bytes ? decode_delivery(*bytes, why) : std::nullopt;
    if (!d) return drop(deliveries, name, why, notes);
    if (delivery_file_name(d->delivery_id) != name) {
      return drop(deliveries, name, "its id does not match its name", notes);
    }
    for (const std::uint64_t seq : d->seqs) max_seq = std::max(max_seq, seq);
    // Results consumed meanwhile are gone; the delivery carries on with the rest.
    std::erase_if(d->seqs, [&](std::uint64_t seq) { return !key_by_seq_.contains(seq); });
    if (d->seqs.empty()) return drop(deliveries, name, "none of its results is held", notes);
    deliveries_.emplace(d->delivery_id, std::move(*d));
  });
}

}  // namespace handoff
