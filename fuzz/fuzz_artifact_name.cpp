// Artifact names and artifact/read paging, the two things a client controls when it reads an
// artifact back.
//
// Names: the engine's is_sha256_hex(), artifact/read's params decoder and artifact_store::open()
// accept exactly 64 lowercase hex digits and nothing else; an accepted name maps to
// <store>/<name>.txt and nowhere else (no traversal, no other directory); open() finds the one
// artifact the store holds and nothing for any other name.
// Paging: read_page() on a random text with a random offset/limit gives what Pi 1.6.0's read
// gives (the reference below is tests/engine/text_page_test.cpp's), refuses exactly offsets 0 and
// past the end, and a first line over 50 KiB comes back as its first 50 KiB, cut on a UTF-8
// character boundary.
//
// Input layout: byte 0 is the name's length n, the next n bytes the name; then 2 bytes offset
// and 2 bytes limit (0xFFFF: none), then the text. In the text, 0xFE k expands to a run of
// 1 KiB to 64 KiB of one character (1 to 4 bytes wide) and 0xFD k to 16k newlines, so pages
// over 2000 lines or 50 KiB are reached within libFuzzer's input sizes.
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/store/artifact_store.hpp"
#include "engine/fs/sha256.hpp"
#include "engine/text/text_page.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/messages.hpp"
#include "utf8.hpp"
#include "pi_read_reference.hpp"  // tests/

namespace {

using handoff::test::pi_read;
using handoff::test::pi_result;
using handoff::test::split;

namespace fs = std::filesystem;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_artifact_name: invariant broken: %s\n", what);
  std::abort();
}

// ---- names ------------------------------------------------------------------------------------

// A store holding one artifact, and a file of the same name one directory up that must never
// be reachable through it.
struct store_env {
  fs::path base;
  std::optional<handoff::artifact_store> store;
  std::string text = "the one artifact\nits second line";
  std::string sha;

  store_env() {
    base = fs::temp_directory_path() / ("handoff-fuzz-artifact-" + std::to_string(::getpid()));
    fs::remove_all(base);
    fs::create_directories(base);
    fs::permissions(base, fs::perms::owner_all, fs::perm_options::replace);
    store.emplace(base / "store");
    sha = store->save(text).sha256;
    std::FILE* outside = std::fopen((base / (sha + ".txt")).c_str(), "w");
    if (outside != nullptr) std::fclose(outside);
  }
  ~store_env() {
    store.reset();
    std::error_code ignored;
    fs::remove_all(base, ignored);
  }
};

store_env& stores() {
  static store_env e;
  return e;
}

bool reference_name(std::string_view name) {
  if (name.size() != 64) return false;
  for (char c : name)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

void check_name(std::string_view name) {
  const bool valid = reference_name(name);
  require(handoff::is_sha256_hex(name) == valid, "is_sha256_hex() disagrees with 64 lowercase hex");

  nlohmann::json params = {{"sha256", std::string(name)}, {"offset", 1}};
  bool decoded = true;
  try {
    const auto p = handoff::rpc::decode_params<handoff::rpc::artifact_read_params>(params, handoff::rpc::wire_limits{});
    require(p.sha256 == name, "artifact/read decoded another name");
  } catch (const handoff::rpc::rpc_error& e) {
    require(e.code == handoff::rpc::errc::invalid_params, "artifact/read refused a name with a non -32602 code");
    decoded = false;
  }
  require(decoded == valid, "artifact/read's decoder disagrees with 64 lowercase hex");

  store_env& env = stores();
  const auto file = env.store->open(name);
  if (!valid) {
    require(!file.has_value(), "open() accepted a name that is not 64 lowercase hex");
    return;
  }
  const fs::path path = env.store->path_of(name);
  require(path.parent_path() == env.store->dir(), "an artifact path outside the store");
  require(path.filename() == std::string(name) + ".txt", "an artifact path with another file name");
  require(file.has_value() == (name == env.sha), "open() found an artifact that was never saved, or lost one");
  if (file) require(file->view() == env.text, "open() mapped other bytes than were saved");
}

// ---- paging -----------------------------------------------------------------------------------

// Expanded texts stop growing here: larger ones add no new paths, only time per input.
constexpr std::size_t max_text_bytes = 256 * 1024;

std::string expand(std::string_view in) {
  static constexpr std::string_view units[] = {"x", "\xC3\xA9", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80"};
  std::string out;
  for (std::size_t i = 0; i < in.size() && out.size() < max_text_bytes; ++i) {
    const auto c = static_cast<unsigned char>(in[i]);
    if ((c != 0xFE && c != 0xFD) || i + 1 == in.size()) {
      out.push_back(in[i]);
      continue;
    }
    const auto k = static_cast<unsigned char>(in[++i]);
    if (c == 0xFD) {
      out.append(16 * static_cast<std::size_t>(k), '\n');
      continue;
    }
    const std::string_view unit = units[k & 3];
    const std::size_t bytes = (static_cast<std::size_t>(k >> 2) + 1) * 1024;
    for (std::size_t n = 0; n < bytes / unit.size(); ++n) out.append(unit);
  }
  return out;
}

void check_page(std::string_view text, std::size_t offset, std::optional<std::size_t> limit) {
  const std::vector<std::string_view> lines = split(text);
  handoff::text_page page;
  try {
    page = handoff::read_page(text, {offset, limit});
  } catch (const std::out_of_range&) {
    require(offset == 0 || offset > lines.size(), "a page refused though its offset is a line");
    return;
  }
  require(offset >= 1 && offset <= lines.size(), "a page served past the end");
  require(page.total_lines == lines.size(), "totalLines is not split(\"\\n\").length");
  require(page.first_line == offset, "firstLine is not the offset");
  require(page.text.size() <= handoff::read_max_bytes, "a page over 50 KiB");
  require(page.next_offset == (page.last_line < lines.size() ? std::optional<std::size_t>(page.last_line + 1)
                                                             : std::nullopt),
          "nextOffset is not the line after the page");
  if (limit == std::size_t{0}) {
    require(page.text.empty() && page.last_line + 1 == offset, "limit 0 returned lines");
    return;
  }
  const pi_result pi = pi_read(lines, offset, limit);
  if (pi.first_line_exceeds) {
    const std::string_view line = lines[offset - 1];
    require(page.partial_line && page.last_line == offset, "a first line over 50 KiB not shown in part");
    require(line.substr(0, page.text.size()) == page.text, "a partial line that is not the line's start");
    require(page.text.size() == handoff::utf8_floor(line, handoff::read_max_bytes),
            "a partial line not cut at the last character boundary within 50 KiB");
    return;
  }
  require(!page.partial_line, "a partial line though the first line fits");
  require(page.text == pi.content, "the page differs from Pi's read");
  require(page.last_line == pi.last_line, "lastLine differs from Pi's read");
  const std::size_t wanted = std::min(limit.value_or(lines.size()), lines.size() - offset + 1);
  require(page.cut == (page.last_line - offset + 1 < wanted), "cut does not say whether lines were held back");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  stores();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t n = std::min<std::size_t>(data[0], size - 1);
  check_name(std::string_view(reinterpret_cast<const char*>(data) + 1, n));

  std::size_t at = 1 + n;
  if (size - at < 4) return 0;
  const std::size_t offset = static_cast<std::size_t>(data[at]) << 8 | data[at + 1];
  const std::size_t raw_limit = static_cast<std::size_t>(data[at + 2]) << 8 | data[at + 3];
  const std::optional<std::size_t> limit = raw_limit == 0xFFFF ? std::nullopt : std::optional<std::size_t>(raw_limit);
  at += 4;
  const std::string text = expand(std::string_view(reinterpret_cast<const char*>(data) + at, size - at));
  check_page(text, offset, limit);
  return 0;
}
