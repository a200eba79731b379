#include "engine/artifact_store.hpp"

#include <unistd.h>

#include "engine/atomic_file.hpp"
#include "engine/posix_io.hpp"
#include "engine/private_dir.hpp"
#include "engine/sha256.hpp"

namespace handoff {

namespace {

// What stands at an artifact's name.
struct existing {
  enum class verdict { absent, same, refused };
  verdict state = verdict::absent;
  std::string reason;  // when refused
};

// A file at the name is trusted only when it is a regular file of ours, closed to others, and
// holds exactly `text`. Its bytes are compared, not re-hashed: the comparison is cheaper and
// proves more. Anything else is reported and left exactly as it is.
existing check_existing(int dir_fd, const std::string& name, const std::string& shown,
                        std::string_view text) {
  private_file f = open_private_file(dir_fd, name, shown);
  if (f.state == private_file::status::absent) return {};
  if (f.state == private_file::status::refused) {
    return {existing::verdict::refused, std::move(f.reason)};
  }
  const auto size = static_cast<std::size_t>(f.st.st_size);
  if (size != text.size()) {
    return {existing::verdict::refused, "a different file is at " + shown + " (" +
                                            std::to_string(size) + " bytes, expected " +
                                            std::to_string(text.size()) +
                                            "); leaving it untouched"};
  }
  if (!content_equals(f.fd.get(), text)) {
    return {existing::verdict::refused,
            "a different file of the same size is at " + shown + "; leaving it untouched"};
  }
  return {existing::verdict::same, {}};
}

}  // namespace

artifact_store::artifact_store(std::filesystem::path dir) : dir_(normalize_dir(dir)) {
  dir_fd_ = open_private_dir(dir_, "artifact dir").release();
}

artifact_store::~artifact_store() {
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

artifact_ref artifact_store::save(std::string_view text) { return save(text, sha256_hex(text)); }

artifact_ref artifact_store::save(std::string_view text, std::string_view sha256_hex) {
  artifact_ref ref;
  ref.sha256 = std::string(sha256_hex);
  // The name comes from the hash alone; a malformed hash is a caller bug, not a file name.
  if (!is_sha256_hex(sha256_hex)) {
    ref.error = "invalid SHA-256 \"" + ref.sha256 + "\" for an artifact name";
    return ref;
  }
  const std::string name = ref.sha256 + ".txt";
  const std::string shown = path_of(sha256_hex).string();
  const auto settle = [&](existing found) {
    if (found.state == existing::verdict::same) {
      ref.saved = true;
      ref.path = shown;
    } else {
      ref.error = found.state == existing::verdict::refused
                      ? std::move(found.reason)
                      : "the artifact disappeared right after it was written";
    }
    return ref;
  };

  // Identical content was saved before: reuse it, once verified.
  if (existing found = check_existing(dir_fd_, name, shown, text);
      found.state != existing::verdict::absent) {
    return settle(std::move(found));
  }
  try {
    if (write_file_atomically(dir_fd_, name, text, publish_mode::no_replace, "the artifact")) {
      ref.saved = true;
      ref.path = shown;
      return ref;
    }
  } catch (const fs_error& e) {
    ref.error = e.what();
    return ref;
  }
  // Someone published the name between our check and our link: trust it only once verified.
  return settle(check_existing(dir_fd_, name, shown, text));
}

std::optional<mapped_file> artifact_store::open(std::string_view sha256_hex) const {
  if (!is_sha256_hex(sha256_hex)) return std::nullopt;
  const std::string name = std::string(sha256_hex) + ".txt";
  private_file f = open_private_file(dir_fd_, name, name);
  if (f.state != private_file::status::ok) return std::nullopt;
  return mapped_file(f.fd.get());
}

std::filesystem::path artifact_store::path_of(std::string_view sha256_hex) const {
  return dir_ / (std::string(sha256_hex) + ".txt");
}

}  // namespace handoff
