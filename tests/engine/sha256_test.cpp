// SHA-256 against the FIPS 180-2 / NIST example vectors, and incremental == one-shot.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>

#include "engine/fs/sha256.hpp"

using handoff::is_sha256_hex;
using handoff::sha256;
using handoff::sha256_hex;

TEST_CASE("sha256_hex matches the published test vectors") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1'000'000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256_hex hashes every byte, NUL included") {
  const std::string with_nul("a\0b", 3);
  CHECK(sha256_hex(with_nul) != sha256_hex("a"));
  CHECK(sha256_hex(with_nul) != sha256_hex("ab"));
  CHECK(sha256_hex(with_nul).size() == 64);
  CHECK(is_sha256_hex(sha256_hex(with_nul)));
}

TEST_CASE("incremental hashing equals one-shot hashing, whatever the pieces") {
  std::mt19937 rng(20240611);
  std::string text(200'000, '\0');
  for (char& c : text) c = static_cast<char>(rng() & 0xff);
  const std::string expected = sha256_hex(text);

  for (int round = 0; round < 20; ++round) {
    sha256 h;
    std::size_t at = 0;
    while (at < text.size()) {
      const std::size_t piece = std::min<std::size_t>(rng() % 70'000, text.size() - at);
      h.update(std::string_view(text).substr(at, piece));  // pieces of 0 bytes included
      at += piece;
    }
    CHECK(h.final_hex() == expected);
  }
}

TEST_CASE("a spent sha256 refuses further use") {
  sha256 h;
  h.update("abc");
  CHECK(h.final_hex() == sha256_hex("abc"));
  CHECK_THROWS_AS(h.update("more"), std::logic_error);
  CHECK_THROWS_AS(h.final_hex(), std::logic_error);
}

TEST_CASE("sha256_placeholder is a hash-shaped name of sha256_hex's length") {
  CHECK_EQ(sha256_hex("x").size(), handoff::sha256_hex_chars);
  CHECK_EQ(handoff::sha256_placeholder().size(), handoff::sha256_hex_chars);
  CHECK(is_sha256_hex(handoff::sha256_placeholder()));
}

TEST_CASE("is_sha256_hex accepts exactly 64 lowercase hex digits") {
  const std::string good = sha256_hex("x");
  CHECK(is_sha256_hex(good));
  CHECK(is_sha256_hex(std::string(64, '0')));
  CHECK(is_sha256_hex(std::string(64, 'f')));
  CHECK_FALSE(is_sha256_hex(""));
  CHECK_FALSE(is_sha256_hex(good.substr(1)));                 // 63 digits
  CHECK_FALSE(is_sha256_hex(good + "0"));                     // 65 digits
  CHECK_FALSE(is_sha256_hex(std::string(64, 'A')));           // uppercase
  CHECK_FALSE(is_sha256_hex(std::string(63, 'a') + "g"));     // not hex
  CHECK_FALSE(is_sha256_hex(good.substr(0, 60) + ".txt"));    // a file name, not a hash
  CHECK_FALSE(is_sha256_hex("../" + good.substr(3)));         // a path
  CHECK_FALSE(is_sha256_hex(std::string(63, 'a') + '\0'));    // embedded NUL
}
