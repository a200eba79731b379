// parse_json's fast path (protocol/json_fast_path.hpp) against nlohmann's parser: whatever the
// fast path accepts, nlohmann accepts too and builds identically (same types, same values); the
// plain documents the daemon receives do take the fast path; everything else is left to
// nlohmann, whose errors parse_json reports as before.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "protocol/json_fast_path.hpp"
#include "protocol/json_parse.hpp"

using nlohmann::json;
using handoff::rpc::parse_json;
using handoff::rpc::parse_json_fast;

namespace {

constexpr std::size_t deep = 1000;

// Equal values of equal types (1 and 1u differ here; so do 0.0 and -0.0).
bool identical(const json& a, const json& b) {
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case json::value_t::object: {
      if (a.size() != b.size()) return false;
      for (auto it = a.begin(); it != a.end(); ++it) {
        auto other = b.find(it.key());
        if (other == b.end() || !identical(it.value(), *other)) return false;
      }
      return true;
    }
    case json::value_t::array:
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i)
        if (!identical(a[i], b[i])) return false;
      return true;
    case json::value_t::number_float: {
      const double x = a.get<double>(), y = b.get<double>();
      return x == y && std::signbit(x) == std::signbit(y);
    }
    default:
      return a == b;
  }
}

// What nlohmann's own parser makes of `text`, or nullopt when it refuses it.
std::optional<json> reference(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

// The fast path's contract on one text; returns whether it took the text.
bool agrees(const std::string& text) {
  auto fast = parse_json_fast(text, deep);
  if (!fast) return false;
  auto slow = reference(text);
  CAPTURE(text);
  REQUIRE(slow);
  CHECK(identical(*fast, *slow));
  return true;
}

}  // namespace

TEST_CASE("json fast path: plain documents take it and match nlohmann exactly") {
  const char* const plain[] = {
      R"({"jsonrpc":"2.0","id":1,"method":"daemon/status"})",
      R"({"jsonrpc":"2.0","id":"a","method":"m","params":{"x":[1,-2,3.5,-0,0,-0.0,1e3,2E-2,true,false,null]}})",
      R"( { "a" : [ ] , "b" : { } , "c" : "" } )",
      "\t\r\n[1]\n",
      R"({"a":1,"a":2})",
      R"(["\"\\\/\b\f\n\r\t", "\u0000\u001f\u00e9\u4f60\ud83d\ude00", "\uD83D\uDE00"])",
      "[\"\xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x98\x80 \xc3\xa9 \xed\x9f\xbf \xee\x80\x80 \xf4\x8f\xbf\xbf\x7f\"]",
      R"([18446744073709551615, 18446744073709551616, -9223372036854775808, -9223372036854775809])",
      R"([123456789012345678901234567890, 1e308, -1.5e-300, 0.1, 2.2250738585072014e-308])",
      "\"just a string\"",
      "42",
      "null",
  };
  for (const char* text : plain) {
    CAPTURE(text);
    CHECK(agrees(text));
  }
}

TEST_CASE("json fast path: a long finalText with escapes and UTF-8 is taken whole") {
  std::string text;
  for (int i = 0; i < 20'000; ++i) text += "line " + std::to_string(i) + ": \"quoted\"\tand \xc3\xa9t\xc3\xa9 \\ done\n";
  const std::string frame =
      R"({"jsonrpc":"2.0","id":7,"method":"subagent/completed","params":{"parentId":"p","childId":"c","status":"done","finalText":)" +
      json(text).dump() + "}}";
  auto fast = parse_json_fast(frame, 64);
  REQUIRE(fast);
  CHECK((*fast)["params"]["finalText"] == text);
  CHECK(identical(*fast, json::parse(frame)));
  CHECK(identical(parse_json(frame, 64), *fast));
}

TEST_CASE("json fast path: anything irregular is left to nlohmann") {
  const char* const left[] = {
      "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{'a':1}", "nul", "tru", "{} x", "{\"a\":1}{\"b\":2}",
      "/* c */ {}", "{\"a\":01}", "[-]", "[1.]", "[.5]", "[1e]", "[+1]", "[1e400]", "[-1e400]", "[1e-400]",
      "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"a\x01\"", "\"open",
      "\"\xff\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"\xe4\xbd\"", "\"\xf4\x90\x80\x80\"", "\"\x80\"",
      "\"\xe0\x80\x80\"", "\"\xf0\x80\x80\x80\"", "\xef\xbb\xbf{}", "[1]\xff", "{\"a\" 1}", "[1 2]",
  };
  for (const char* text : left) {
    CAPTURE(text);
    CHECK_FALSE(parse_json_fast(text, deep));
  }
  // nlohmann still decides: the byte-order mark is accepted, tiny numbers too.
  CHECK(parse_json("\xef\xbb\xbf{}", 64) == json::object());
  CHECK(parse_json("[1e-400]", 64)[0].is_number_float());
  CHECK_THROWS_AS(parse_json("[1e400]", 64), handoff::rpc::json_parse_error);
}

TEST_CASE("json fast path: the nesting cap is nlohmann's to enforce") {
  CHECK(parse_json_fast("[[1]]", 2));
  CHECK_FALSE(parse_json_fast("[[[1]]]", 2));
  CHECK_THROWS_AS(parse_json("[[[1]]]", 2), handoff::rpc::json_parse_error);
  // Deeper than its recursion allows: nlohmann parses it (iteratively).
  const std::string nested = std::string(600, '[') + std::string(600, ']');
  CHECK_FALSE(parse_json_fast(nested, deep));
  CHECK(parse_json(nested, deep).is_array());
}

TEST_CASE("json fast path: random mutations never make it accept what nlohmann refuses") {
  const std::vector<std::string> seeds = {
      R"({"jsonrpc":"2.0","id":12,"method":"subagent/completed","params":{"parentId":"p","childId":"c","status":"done","finalText":"a\"b\\c\n\u00e9\ud83d\ude00 x"}})",
      R"({"a":[1,-2.5e3,true,false,null,{"b":"\u0041"}],"c":-0,"d":18446744073709551616})",
      "[\"\xe4\xbd\xa0\xf0\x9f\x98\x80\", 0.25, \"\\t\"]",
  };
  const std::string alphabet = "{}[]\":,\\/ \t\n-+.eE0123456789abfnrtuDdc\x01\x7f\x80\xbf\xc3\xe4\xed\xf0\xf4\xff";
  std::mt19937_64 rng(20261130);
  std::size_t taken = 0;
  for (int round = 0; round < 30'000; ++round) {
    std::string text = seeds[rng() % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const std::size_t at = rng() % text.size();
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 4) {
        case 0: text[at] = c; break;
        case 1: text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c); break;
        case 2: text.erase(at, 1); break;
        default: text.resize(at); break;
      }
    }
    if (agrees(text)) ++taken;
  }
  CHECK(taken > 100);  // the comparison did run on accepted texts
}
