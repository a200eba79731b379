// rpc::append_json (protocol/json_dump.hpp) writes exactly what nlohmann's dump() writes, and
// leaves strings that are not UTF-8 to nlohmann's error handling.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "protocol/json_dump.hpp"
#include "protocol/jsonrpc.hpp"
#include "utf8.hpp"

using nlohmann::json;
using handoff::rpc::append_json;

namespace {

std::string fast(const json& v) {
  std::string out = "prefix:";
  REQUIRE(append_json(out, v));
  return out.substr(7);
}

}  // namespace

TEST_CASE("json dump: the same bytes as nlohmann for every kind of value") {
  const json values[] = {
      nullptr, true, false, 0, -1, 42u, std::numeric_limits<std::int64_t>::min(),
      std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::uint64_t>::max(), 24.1, -0.0, 1e300, 5e-324, 0.1,
      std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(), "", "plain",
      "\"quoted\" \\ / \b\f\n\r\t \x01\x1f\x7f", std::string("nul \0 inside", 12),
      "\xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x98\x80 \xc3\xa9 \xed\x9f\xbf \xf4\x8f\xbf\xbf", json::object(), json::array(),
      json::parse(R"({"b":[1,{"c":null,"a":"x"}],"a":{"z":[],"y":{}},"":-2.5})"),
  };
  for (const auto& v : values) {
    CAPTURE(v.dump());
    CHECK(fast(v) == v.dump());
  }
}

TEST_CASE("json dump: random strings, long and short, match nlohmann") {
  const std::string pieces[] = {"a", "text ", "\"", "\\", "\n", "\t", "\x01", "\x1f", "\x7f", "/",
                                "\xc3\xa9", "\xe4\xbd\xa0", "\xf0\x9f\x98\x80", "0123456789abcdef"};
  std::mt19937_64 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string s;
    const int n = static_cast<int>(rng() % 200);
    for (int i = 0; i < n; ++i) s += pieces[rng() % std::size(pieces)];
    json v = {{"finalText", s}, {"n", round}};
    CHECK(fast(v) == v.dump());
  }
  std::string big;
  while (big.size() < (1 << 20)) big += "- Checked `daemon/x.cpp`: the \"tail\" path\tkeeps \xc3\xa9 \\ ok.\n";
  CHECK(fast(json(big)) == json(big).dump());
}

TEST_CASE("json dump: a string escaped piece by piece, cut on characters, is the string escaped whole") {
  const std::string pieces[] = {"a", "text ", "\"", "\\", "\n", "\x01", "\xc3\xa9", "\xe4\xbd\xa0", "\xf0\x9f\x98\x80"};
  std::mt19937_64 rng(11);
  for (int round = 0; round < 500; ++round) {
    std::string s;
    const int n = static_cast<int>(rng() % 400);
    for (int i = 0; i < n; ++i) s += pieces[rng() % std::size(pieces)];
    std::string whole;
    REQUIRE(handoff::rpc::append_json_string(whole, s));
    // Pieces of 1 to 40 bytes, each end moved back to a character boundary (never to 0 progress:
    // a piece is at least one character).
    std::string joined = "\"";
    for (std::size_t at = 0; at < s.size();) {
      std::size_t end = std::min(s.size(), at + 1 + static_cast<std::size_t>(rng() % 40));
      if (end < s.size()) end = std::max(handoff::utf8_floor(s, end), handoff::utf8_ceil(s, at + 1));
      REQUIRE(handoff::rpc::append_json_escaped(joined, std::string_view(s).substr(at, end - at)));
      at = end;
    }
    joined += '"';
    CHECK(joined == whole);
  }
  std::string out = "kept";
  CHECK_FALSE(handoff::rpc::append_json_escaped(out, "ok\xe4\xbd"));  // a character cut in two
  CHECK(out == "kept");
}

TEST_CASE("json dump: a string that is not UTF-8 is left to nlohmann, output untouched") {
  for (const char* bad : {"\xff", "a\xc0\xaf", "\xed\xa0\x80", "x\xe4\xbd", "\xf4\x90\x80\x80", "\x80"}) {
    std::string out = "kept";
    CHECK_FALSE(append_json(out, json{{"ok", "fine"}, {"t", bad}}));
    CHECK(out == "kept");
  }
  // What jsonrpc writes for it: nlohmann's U+FFFD replacement, as before.
  const json bad = {{"t", "a\xff"}};
  CHECK(handoff::rpc::make_response(1, bad) ==
        R"({"jsonrpc":"2.0","id":1,"result":)" + bad.dump(-1, ' ', false, json::error_handler_t::replace) + "}");
}
