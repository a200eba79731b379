// Queues written by handoffd 0.1 before the journal kept one file per record (records/) and
// per delivery (deliveries/). recover() moves what they hold into the journal once, so an
// upgrade loses nothing acknowledged; their texts stay where they are (texts/ is unchanged)
// and their tombstones (done/) have the same form.
#include <fcntl.h>
#include <unistd.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "engine/fs/atomic_file.hpp"
#include "engine/queue/journal_entry.hpp"
#include "engine/fs/private_dir.hpp"
#include "engine/queue/queue_disk.hpp"
#include "engine/queue/queue_files.hpp"
#include "engine/queue/queue_recovery.hpp"

namespace handoff {

namespace {

// The old area, if there is one (never created here).
unique_fd open_legacy(int queue_fd, const std::filesystem::path& queue_dir, const char* name) {
  struct stat st {};
  if (::fstatat(queue_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT) return {};
  return open_private_subdir(queue_fd, name, queue_dir / name, "queue dir");
}

}  // namespace

void queue_recovery::migrate_legacy(std::vector<std::string>& notes, std::uint64_t& max_seq) {
  unique_fd records = open_legacy(p_.queue_fd, p_.dir, "records");
  unique_fd deliveries = open_legacy(p_.queue_fd, p_.dir, "deliveries");
  if (!records && !deliveries) return;
  std::vector<std::string> heads, names_done;
  std::vector<held_result> moved;
  std::vector<stored_delivery> moved_deliveries;
  std::unordered_map<std::string, std::optional<text_shape>> checked;
  for (const std::string& name : records ? list_names(records.get()) : std::vector<std::string>{}) {
    std::string why;
    const auto bytes = hash_stem(name, ".json") ? read_queue_file(records.get(), name, "records/" + name, why) : std::nullopt;
    auto r = bytes ? decode_record(*bytes, why) : std::nullopt;
    if (!r || completion_key(r->info.parent_id, r->info.child_id) + ".json" != name) {
      notes.push_back("left alone records/" + name + " (an older queue's record): " + (why.empty() ? "not one of ours" : why));
      continue;
    }
    const std::string key = name.substr(0, 64);
    auto [it, fresh] = checked.try_emplace(r->sha256);
    if (fresh) it->second = check_text_file(r->sha256, notes);
    if (!it->second || p_.index.holds(key) || p_.index.key_of(r->seq) != nullptr || p_.tombstones.has_file(key)) {
      notes.push_back("dropped records/" + name + " (an older queue's record): its text is missing, or it was delivered");
      names_done.push_back("records/" + name);
      continue;
    }
    r->shape = *it->second;
    heads.push_back(encode_entry_head(entry_kind::put, encode_put(*r, text_place::in_file), 0));
    moved.push_back(std::move(*r));
    names_done.push_back("records/" + name);
  }
  for (const std::string& name : deliveries ? list_names(deliveries.get()) : std::vector<std::string>{}) {
    std::string why;
    const auto bytes = hash_stem(name, ".json") ? read_queue_file(deliveries.get(), name, "deliveries/" + name, why) : std::nullopt;
    auto d = bytes ? decode_delivery(*bytes, why) : std::nullopt;
    names_done.push_back("deliveries/" + name);
    if (!d) continue;
    heads.push_back(encode_entry_head(entry_kind::delivery, encode_delivery(*d), 0));
    moved_deliveries.push_back(std::move(*d));
  }
  // Into the journal first (synced), then the old files go: a crash in between migrates again,
  // and the second copy of each entry replaces the first.
  std::vector<iovec> pieces;
  for (const std::string& h : heads) pieces.push_back(journal_piece(h));
  if (!pieces.empty()) p_.journal.append(pieces);
  const std::uint64_t segment = p_.journal.active();
  for (held_result& r : moved) {
    max_seq = std::max(max_seq, r.seq);
    const std::string key = completion_key(r.info.parent_id, r.info.child_id);
    p_.index.hold(key, queue_index::entry{std::move(r), queue_index::location{segment, 0, text_place::in_file}});
  }
  for (stored_delivery& d : moved_deliveries) {
    for (const std::uint64_t seq : d.seqs) max_seq = std::max(max_seq, seq);
    p_.index.add_delivery(std::move(d), segment);
  }
  for (const std::string& path : names_done) {
    const bool is_record = path.starts_with("records/");
    remove_name(is_record ? records.get() : deliveries.get(), path.substr(path.find('/') + 1), path);
  }
  if (!moved.empty() || !moved_deliveries.empty())
    notes.push_back("moved " + std::to_string(moved.size()) + " results and " + std::to_string(moved_deliveries.size()) +
                    " deliveries from an older queue's records/ and deliveries/ into the journal");
  for (const char* area : {"records", "deliveries"})
    if (::unlinkat(p_.queue_fd, area, AT_REMOVEDIR) != 0 && errno != ENOENT)
      notes.push_back(std::string("left ") + area + "/ in place: " + fs_error(errno, "removing it").what());
  sync_quietly(p_.queue_fd);
}

}  // namespace handoff
