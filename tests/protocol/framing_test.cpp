// frame_decoder and encode_frame: both framings, any chunking, the frame cap, bad headers.
#include "protocol/framing.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using handoff::rpc::decoded_frame;
using handoff::rpc::encode_frame;
using handoff::rpc::frame_decoder;
using handoff::rpc::framing;
using handoff::rpc::max_header_block_bytes;

// A frame as a comparable string: its payload, or "!oversized N" for a skipped one.
std::string describe(const decoded_frame& f) {
  if (!f.oversized) return f.payload;
  CHECK(f.payload.empty());
  return "!oversized " + std::to_string(f.oversized_bytes);
}

std::vector<std::string> drain(frame_decoder& d) {
  std::vector<std::string> out;
  while (auto f = d.next()) out.push_back(describe(*f));
  return out;
}

std::vector<std::string> decode_whole(std::string_view stream, std::size_t cap) {
  frame_decoder d(cap);
  d.feed(stream);
  return drain(d);
}

// Feeds the stream in chunks of 1..max_chunk bytes, draining after each one.
std::vector<std::string> decode_chunked(std::string_view stream, std::size_t cap, std::mt19937& rng,
                                        std::size_t max_chunk) {
  frame_decoder d(cap);
  std::vector<std::string> out;
  std::uniform_int_distribution<std::size_t> size(1, max_chunk);
  for (std::size_t at = 0; at < stream.size();) {
    const std::size_t n = std::min(size(rng), stream.size() - at);
    d.feed(stream.substr(at, n));
    at += n;
    for (auto& f : drain(d)) out.push_back(std::move(f));
  }
  return out;
}

std::string lsp(std::string_view body, std::string_view extra_headers = "") {
  return "Content-Length: " + std::to_string(body.size()) + "\r\n" + std::string(extra_headers) +
         "\r\n" + std::string(body);
}

// Every chunking, including one byte at a time, gives the frames the whole stream gives.
void check_any_chunking(std::string_view stream, std::size_t cap,
                        const std::vector<std::string>& expected) {
  CHECK(decode_whole(stream, cap) == expected);
  std::mt19937 rng(12345);
  CHECK(decode_chunked(stream, cap, rng, 1) == expected);
  for (std::size_t max_chunk : {2, 3, 7, 16, 64, 1000}) {
    for (int round = 0; round < 20; ++round) {
      CAPTURE(max_chunk);
      CAPTURE(round);
      REQUIRE(decode_chunked(stream, cap, rng, max_chunk) == expected);
    }
  }
}

}  // namespace

TEST_CASE("framing: ndjson: frames end at newlines, CRLF and blank lines are handled") {
  const std::string stream =
      "\n  \r\n"  // blank lines before anything
      "{\"a\":1}\n"
      "{\"b\":2}\r\n"  // CRLF: the '\r' is stripped
      "\n"
      " \t \r\n"                // whitespace-only: skipped
      "  {\"c\": \"x y\"}  \n"  // inner and surrounding spaces are kept (JSON ignores them)
      "[1,2]\r\r\n";            // only one trailing '\r' is stripped
  check_any_chunking(stream, 1024, {"{\"a\":1}", "{\"b\":2}", "  {\"c\": \"x y\"}  ", "[1,2]\r"});
}

TEST_CASE("framing: ndjson: the mode is decided by the first bytes") {
  frame_decoder d(64);
  CHECK(d.mode() == framing::undecided);
  d.feed("\r\n \n");
  CHECK_FALSE(d.next());
  CHECK(d.mode() == framing::undecided);  // whitespace says nothing
  d.feed("Cont");
  CHECK_FALSE(d.next());
  CHECK(d.mode() == framing::undecided);  // still a prefix of "Content-Length:"
  d.feed("act\n");
  auto f = d.next();
  REQUIRE(f);
  CHECK(d.mode() == framing::ndjson);
  CHECK(f->payload == "Contact");
}

TEST_CASE("framing: ndjson: an incomplete last line is not a frame") {
  frame_decoder d(64);
  d.feed("{\"a\":1}\n{\"b\"");
  CHECK(drain(d) == std::vector<std::string>{"{\"a\":1}"});
  CHECK(d.buffered_bytes() == 4);
  CHECK(d.in_frame());
  d.feed(":2}\n");
  CHECK(drain(d) == std::vector<std::string>{"{\"b\":2}"});
  CHECK(d.buffered_bytes() == 0);
  CHECK_FALSE(d.in_frame());
}

TEST_CASE("framing: ndjson: the cap is exact, an oversized line is skipped, decoding resumes") {
  const std::size_t cap = 10;
  const std::string stream =
      "0123456789\n"    // exactly the cap: a frame
      "0123456789\r\n"  // the cap plus the CR of CRLF: a frame
      "0123456789A\n"   // one byte over: skipped, reported once
      "{}\n" +
      std::string(1000, 'x') + "\n" +  // far over, arriving in many pieces
      "[]\n";
  check_any_chunking(stream, cap,
                     {"0123456789", "0123456789", "!oversized 11", "{}", "!oversized 1000", "[]"});
}

TEST_CASE("framing: ndjson: a 10 MB line never makes the decoder buffer more than the cap") {
  const std::size_t cap = 64 * 1024;
  frame_decoder d(cap);
  const std::string chunk(8192, 'y');
  std::size_t peak = 0;
  for (int i = 0; i < 1280; ++i) {  // 10 MiB
    d.feed(chunk);
    CHECK_FALSE(d.next());
    peak = std::max(peak, d.buffered_bytes());
    CHECK(d.in_frame());
  }
  CHECK(peak <= cap + 1);
  d.feed("tail\n{\"next\":true}\n");
  CHECK(drain(d) == std::vector<std::string>{"!oversized " + std::to_string(10 * 1024 * 1024 + 4),
                                             "{\"next\":true}"});
  CHECK(d.buffered_bytes() == 0);
  CHECK_FALSE(d.in_frame());
}

TEST_CASE("framing: ndjson: a large frame that fills the buffer is returned intact") {
  std::string big(300 * 1024, 'b');
  big.front() = '"';
  big.back() = '"';
  frame_decoder d(1024 * 1024);
  d.feed(big.substr(0, 1000));
  CHECK_FALSE(d.next());
  d.feed(big.substr(1000) + "\n");
  auto f = d.next();
  REQUIRE(f);
  CHECK(f->payload == big);
  d.feed("{}\n");
  CHECK(drain(d) == std::vector<std::string>{"{}"});
}

TEST_CASE("framing: ndjson: feeding one byte at a time stays linear") {
  // A quadratic rescan or erase would take minutes here (1 MiB line, one byte per feed).
  const std::string line = "\"" + std::string(1024 * 1024, 'z') + "\"\n";
  frame_decoder d(2 * 1024 * 1024);
  const auto start = std::chrono::steady_clock::now();
  std::size_t frames = 0;
  for (char c : line) {
    d.feed(std::string_view(&c, 1));
    while (d.next()) ++frames;
  }
  const auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(frames == 1);
  CHECK(seconds < 10.0);
}

TEST_CASE("framing: ndjson: a decoder fed without draining keeps every frame") {
  frame_decoder d(64);
  std::vector<std::string> got;
  for (int i = 0; i < 1000; ++i) {
    d.feed("{\"i\":" + std::to_string(i) + "}\n{\"j\":" + std::to_string(i) + "}\n");
    auto f = d.next();  // one out, one left behind each time
    REQUIRE(f);
    got.push_back(f->payload);
  }
  for (auto& f : drain(d)) got.push_back(f);
  REQUIRE(got.size() == 2000);
  CHECK(got[0] == "{\"i\":0}");
  CHECK(got[1] == "{\"j\":0}");
  CHECK(got[1999] == "{\"j\":999}");
  CHECK(d.buffered_bytes() == 0);
}

TEST_CASE("framing: content-length: frames, extra headers, case-insensitive names") {
  const std::string stream =
      lsp("{\"a\":1}") +
      lsp("{\"b\":\n2}", "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n") +
      "content-type: x\r\nCONTENT-LENGTH:   2  \r\nX-Other: y\r\n\r\n[]" +
      "\r\n" +  // a stray line end between messages is tolerated
      lsp("");
  check_any_chunking(stream, 1024, {"{\"a\":1}", "{\"b\":\n2}", "[]", ""});
  frame_decoder d(1024);
  d.feed(stream);
  drain(d);
  CHECK(d.mode() == framing::content_length);
}

TEST_CASE("framing: content-length: the first header name is matched case-insensitively") {
  frame_decoder d(64);
  d.feed("cOnTeNt-LeNgTh: 2\r\n\r\n{}");
  CHECK(drain(d) == std::vector<std::string>{"{}"});
  CHECK(d.mode() == framing::content_length);
}

TEST_CASE("framing: content-length: an oversized body is skipped and counted, decoding resumes") {
  const std::size_t cap = 16;
  const std::string stream = lsp(std::string(16, 'a')) + lsp(std::string(17, 'b')) + lsp("{}") +
                             lsp(std::string(5000, 'c')) + lsp("[]");
  check_any_chunking(stream, cap,
                     {std::string(16, 'a'), "!oversized 17", "{}", "!oversized 5000", "[]"});
}

TEST_CASE("framing: content-length: a 10 MB body never makes the decoder buffer over the cap") {
  const std::size_t cap = 64 * 1024;
  const std::size_t body = 10 * 1024 * 1024;
  frame_decoder d(cap);
  d.feed("Content-Length: " + std::to_string(body) + "\r\nContent-Type: a/b\r\n\r\n");
  const std::string chunk(8192, 'q');
  std::size_t peak = d.buffered_bytes();
  std::vector<std::string> frames;
  for (std::size_t sent = 0; sent < body; sent += chunk.size()) {
    d.feed(chunk);
    for (auto& f : drain(d)) frames.push_back(f);
    peak = std::max(peak, d.buffered_bytes());
  }
  CHECK(peak <= cap + max_header_block_bytes);
  CHECK(frames == std::vector<std::string>{"!oversized " + std::to_string(body)});
  d.feed(lsp("{\"after\":1}"));
  CHECK(drain(d) == std::vector<std::string>{"{\"after\":1}"});
}

TEST_CASE("framing: content-length: a malformed header block throws") {
  const char* const bad[] = {
      "Content-Length: abc\r\n\r\n",
      "Content-Length: -1\r\n\r\n",
      "Content-Length: +1\r\n\r\n",
      "Content-Length: \r\n\r\n",
      "Content-Length: 1 2\r\n\r\n",
      "Content-Length: 99999999999999999999999\r\n\r\n",
      "Content-Length: 2\n\n{}",  // bare LF line ends
      "Content-Length: 2\r\nno colon here\r\n\r\n{}",
      "Content-Length: 2\r\nBad Name: x\r\n\r\n{}",
      "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
      "Content-Length: 2\r\n\r\n{}Content-Type: x\r\n\r\n",  // the second block has no length
  };
  for (const char* stream : bad) {
    CAPTURE(stream);
    frame_decoder d(1024);
    d.feed(stream);
    CHECK_THROWS_AS(drain(d), std::runtime_error);
  }
}

TEST_CASE("framing: content-length: a header block that never ends throws once it passes its cap") {
  frame_decoder d(1024 * 1024);
  d.feed("Content-Length: 2\r\n");
  const std::string filler = "X-Filler: " + std::string(100, 'f') + "\r\n";
  bool threw = false;
  for (int i = 0; i < 200 && !threw; ++i) {
    d.feed(filler);
    try {
      drain(d);
    } catch (const std::runtime_error&) {
      threw = true;
    }
    CHECK(d.buffered_bytes() <= max_header_block_bytes + filler.size());
  }
  CHECK(threw);
}

TEST_CASE("framing: encode_frame writes both framings, and the decoder reads them back") {
  const std::string payload = R"({"jsonrpc":"2.0","id":1,"result":"\u00e9 \n"})";
  CHECK(encode_frame(payload, framing::ndjson) == payload + "\n");
  CHECK(encode_frame(payload, framing::undecided) == payload + "\n");
  CHECK(encode_frame(payload, framing::content_length) ==
        "Content-Length: " + std::to_string(payload.size()) + "\r\n\r\n" + payload);
  for (framing mode : {framing::ndjson, framing::content_length}) {
    const std::string stream = encode_frame(payload, mode) + encode_frame("{}", mode);
    CHECK(decode_whole(stream, 1024) == std::vector<std::string>{payload, "{}"});
  }
  // Content-Length counts bytes, not characters.
  CHECK(encode_frame("\"\xe4\xbd\xa0\"", framing::content_length) ==
        "Content-Length: 5\r\n\r\n\"\xe4\xbd\xa0\"");
}

TEST_CASE("framing: a zero frame cap is refused") {
  CHECK_THROWS_AS(frame_decoder(0), std::invalid_argument);
}
