// SHA-256 through OpenSSL EVP (SHA-NI when the CPU has it).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace handoff {

// Lowercase hex SHA-256 of `data` (64 characters).
std::string sha256_hex(std::string_view data);

// The length of sha256_hex's answer.
inline constexpr std::size_t sha256_hex_chars = 64;
// A hash of that length, all zeros, for sizing a path or a footer before the text's own hash is
// known: only its length counts.
inline std::string sha256_placeholder() { return std::string(sha256_hex_chars, '0'); }

// True when `name` is exactly 64 lowercase hex digits: the only artifact names we accept.
bool is_sha256_hex(std::string_view name) noexcept;

// "<64 hex><suffix>" -> the hex part, else nullopt: the names of artifacts and of the queue's
// text and tombstone files.
std::optional<std::string> hash_stem(std::string_view name, std::string_view suffix);

// Incremental hashing, for data that arrives in pieces.
class sha256 {
 public:
  sha256();
  ~sha256();
  sha256(const sha256&) = delete;
  sha256& operator=(const sha256&) = delete;
  void update(std::string_view data);
  std::string final_hex();  // once; the object is spent afterwards

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace handoff
