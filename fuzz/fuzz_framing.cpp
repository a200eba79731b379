// The frame decoder (protocol/framing.*) fed random bytes in random chunkings, both framings.
//
// Input layout: byte 0 picks the scenario and the frame cap, bytes 1..8 are the chunk sizes
// (used in a cycle), the rest is the stream. Scenarios:
//   raw         the bytes as they are (ndjson unless they start with "Content-Length:")
//   raw_headers "Content-Length:" + the bytes: header blocks full of junk
//   ndjson      the bytes split at 0x1e into payloads, framed one per line
//   lsp         the same payloads framed with Content-Length headers
// Checked every time: the chunked decode gives the same frames as one feed of the whole stream;
// no payload is over the cap; an oversized report is over the cap; payloads are taken from the
// stream in order; what stays buffered after next() == nullopt is bounded. The two framed
// scenarios also check the exact round trip of encode_frame().
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/framing.hpp"

namespace {

using handoff::rpc::decoded_frame;
using handoff::rpc::frame_decoder;
using handoff::rpc::framing;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_framing: invariant broken: %s\n", what);
  std::abort();
}

enum class scenario { raw, raw_headers, ndjson, lsp };

// Small caps reach the oversized paths often; the large ones the normal paths.
constexpr std::array<std::size_t, 8> caps = {1, 2, 7, 16, 64, 300, 4096, 1 << 20};

// What the decoder returned for one stream.
struct outcome {
  std::vector<decoded_frame> frames;
  bool malformed = false;  // next() threw: the stream is lost
  framing mode = framing::undecided;
};

// Decodes `stream` fed in chunks of the given sizes (cycled; 0 feeds an empty chunk).
outcome decode(std::string_view stream, std::size_t cap, const std::vector<std::size_t>& chunks) {
  frame_decoder decoder(cap);
  outcome out;
  std::size_t pos = 0;
  std::size_t turn = 0;
  bool fed_empty = false;
  while (!out.malformed) {
    if (pos == stream.size() && fed_empty) break;
    std::size_t size = chunks.empty() ? stream.size() : chunks[turn++ % chunks.size()];
    if (size == 0 && fed_empty) size = 1;  // all-zero chunk sizes still make progress
    size = std::min(size, stream.size() - pos);
    fed_empty = size == 0;
    decoder.feed(stream.substr(pos, size));
    pos += size;
    try {
      while (auto frame = decoder.next()) out.frames.push_back(std::move(*frame));
    } catch (const std::runtime_error&) {
      out.malformed = true;
      break;
    }
    // Documented bound: at most one frame and one header block wait in the buffer.
    require(decoder.buffered_bytes() <= cap + handoff::rpc::max_header_block_bytes + 1,
            "buffered bytes over the cap once next() returned nullopt");
    if (pos == stream.size() && chunks.empty()) break;
  }
  out.mode = decoder.mode();
  return out;
}

void check_frames(const outcome& out, std::string_view stream, std::size_t cap) {
  // An empty Content-Length body is a frame; an ndjson line is never empty (blank ones are
  // skipped).
  const bool lines = out.mode == framing::ndjson;
  std::size_t cursor = 0;  // payloads appear in the stream in order, without overlapping
  std::size_t consumed = 0;
  for (const decoded_frame& f : out.frames) {
    if (f.oversized) {
      require(f.payload.empty(), "an oversized frame carries a payload");
      require(f.oversized_bytes > cap, "an oversized frame within the cap");
      consumed += f.oversized_bytes;
      continue;
    }
    require(f.payload.size() <= cap, "a payload over the cap");
    require(!lines || !f.payload.empty(), "an empty ndjson frame");
    require(!lines || f.payload.find('\n') == std::string::npos, "a newline inside a line");
    const std::size_t at = stream.find(f.payload, cursor);
    require(at != std::string_view::npos, "a payload that is not in the stream (in order)");
    cursor = at + f.payload.size();
    consumed += f.payload.size();
  }
  require(consumed <= stream.size(), "more bytes returned than fed");
}

// Frame lists from two chunkings must agree; an oversized ndjson line may count its '\r'
// in one and not the other (its size is "as far as read").
void check_same(const outcome& a, const outcome& b, bool exact_sizes) {
  require(a.malformed == b.malformed, "chunking changed whether the stream is malformed");
  require(a.frames.size() == b.frames.size(), "chunking changed the number of frames");
  for (std::size_t i = 0; i < a.frames.size(); ++i) {
    const decoded_frame& x = a.frames[i];
    const decoded_frame& y = b.frames[i];
    require(x.oversized == y.oversized, "chunking changed which frames are oversized");
    require(x.payload == y.payload, "chunking changed a payload");
    if (exact_sizes)
      require(x.oversized_bytes == y.oversized_bytes, "chunking changed an oversized size");
    else
      require(x.oversized_bytes + 1 >= y.oversized_bytes && y.oversized_bytes + 1 >= x.oversized_bytes,
              "chunking changed an oversized size by more than a '\\r'");
  }
}

// Payloads for the framed scenarios: the bytes split at 0x1e. ndjson payloads are made
// line-safe: a leading '{' (never blank, never a Content-Length header, no leading space to
// drop) and no '\r' or '\n' inside.
std::vector<std::string> payloads(std::string_view bytes, bool line_safe) {
  std::vector<std::string> out;
  std::string current = line_safe ? "{" : "";
  for (char c : bytes) {
    if (c == '\x1e') {
      out.push_back(std::move(current));
      current = line_safe ? "{" : "";
      continue;
    }
    if (line_safe && (c == '\n' || c == '\r')) c = ' ';
    current.push_back(c);
  }
  out.push_back(std::move(current));
  return out;
}

// Encoded payloads come back exactly: each one, or its oversized report of its exact size.
// An empty Content-Length body is a frame too (its payload is empty).
void check_round_trip(const outcome& out, const std::vector<std::string>& sent, std::size_t cap) {
  require(!out.malformed, "encode_frame() output was refused as malformed");
  require(out.frames.size() == sent.size(), "frames lost or invented in a round trip");
  for (std::size_t i = 0; i < sent.size(); ++i) {
    const decoded_frame& f = out.frames[i];
    if (sent[i].size() > cap) {
      require(f.oversized && f.oversized_bytes == sent[i].size(), "oversized frame misreported");
    } else {
      require(!f.oversized && f.payload == sent[i], "a frame did not come back byte for byte");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const auto kind = static_cast<scenario>(data[0] & 3);
  const std::size_t cap = caps[(data[0] >> 2) & 7];
  std::vector<std::size_t> chunks;
  std::size_t i = 1;
  for (; i < size && i <= 8; ++i) chunks.push_back(data[i] % 65);
  const std::string_view bytes(reinterpret_cast<const char*>(data) + i, size - i);

  std::string stream;
  std::vector<std::string> sent;
  switch (kind) {
    case scenario::raw:
      stream.assign(bytes);
      break;
    case scenario::raw_headers:
      stream = "Content-Length:";
      stream.append(bytes);
      break;
    case scenario::ndjson:
    case scenario::lsp: {
      const bool lines = kind == scenario::ndjson;
      sent = payloads(bytes, lines);
      for (const auto& p : sent)
        stream += handoff::rpc::encode_frame(p, lines ? framing::ndjson : framing::content_length);
      break;
    }
  }

  const outcome whole = decode(stream, cap, {});
  const outcome chunked = decode(stream, cap, chunks);
  require(whole.mode == chunked.mode || whole.frames.empty(), "chunking changed the framing");
  check_frames(whole, stream, cap);
  check_frames(chunked, stream, cap);
  check_same(whole, chunked, whole.mode == framing::content_length);
  if (kind == scenario::ndjson || kind == scenario::lsp) check_round_trip(chunked, sent, cap);
  return 0;
}
