#include "engine/fs/sha256.hpp"

#include <openssl/evp.h>

#include <array>
#include <stdexcept>

namespace handoff {

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

// EVP calls fail only on allocation failure or a broken OpenSSL install; both are fatal for
// the caller's operation, so they surface as exceptions rather than a wrong hash.
void check(int ok, const char* what) {
  if (ok != 1) throw std::runtime_error(std::string("OpenSSL SHA-256: ") + what + " failed");
}

}  // namespace

struct sha256::state {
  struct ctx_free {
    void operator()(EVP_MD_CTX* c) const noexcept { EVP_MD_CTX_free(c); }
  };
  std::unique_ptr<EVP_MD_CTX, ctx_free> ctx{EVP_MD_CTX_new()};
  bool spent = false;
};

sha256::sha256() : state_(std::make_unique<state>()) {
  if (!state_->ctx) throw std::bad_alloc();
  check(EVP_DigestInit_ex(state_->ctx.get(), EVP_sha256(), nullptr), "init");
}

sha256::~sha256() = default;

void sha256::update(std::string_view data) {
  if (state_->spent) throw std::logic_error("sha256::update after final_hex");
  check(EVP_DigestUpdate(state_->ctx.get(), data.data(), data.size()), "update");
}

std::string sha256::final_hex() {
  if (state_->spent) throw std::logic_error("sha256::final_hex called twice");
  state_->spent = true;
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  check(EVP_DigestFinal_ex(state_->ctx.get(), digest.data(), &length), "final");
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(hex_digits[digest[i] >> 4]);
    hex.push_back(hex_digits[digest[i] & 0x0f]);
  }
  return hex;
}

std::string sha256_hex(std::string_view data) {
  sha256 h;
  h.update(data);
  return h.final_hex();
}

bool is_sha256_hex(std::string_view name) noexcept {
  if (name.size() != 64) return false;
  for (char c : name) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::optional<std::string> hash_stem(std::string_view name, std::string_view suffix) {
  if (name.size() != 64 + suffix.size() || !name.ends_with(suffix)) return std::nullopt;
  const std::string_view stem = name.substr(0, 64);
  if (!is_sha256_hex(stem)) return std::nullopt;
  return std::string(stem);
}

}  // namespace handoff
