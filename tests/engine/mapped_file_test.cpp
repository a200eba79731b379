// mapped_file (engine/fs/mapped_file.hpp): a range of a file seen as bytes, mapped or, when its
// reader reads it whole, read into memory; both give the file's exact bytes.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <system_error>
#include <utility>

#include "engine/fs/mapped_file.hpp"
#include "engine/fs/posix_io.hpp"
#include "support/fs_fixtures.hpp"

using handoff::mapped_file;
using handoff::unique_fd;
using namespace handoff::test;

namespace {

// 3 pages and a bit of numbered lines, so that a range can start inside one page and end in another.
std::string three_pages_and_a_bit() {
  std::string out;
  for (int i = 0; out.size() < 3 * 4096 + 100; ++i) out += "line " + std::to_string(i) + " 结论\n";
  return out;
}

}  // namespace

TEST_CASE("a range mapped and the same range read whole are the file's exact bytes") {
  temp_dir tmp;
  const std::string bytes = three_pages_and_a_bit();
  write_file(tmp.path() / "f", bytes, 0600);
  const unique_fd fd(::open((tmp.path() / "f").c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(fd);
  for (const bool whole : {false, true}) {
    CAPTURE(whole);
    for (const auto& [offset, length] : {std::pair<std::size_t, std::size_t>{0, bytes.size()}, {4095, 2}, {5000, 7000},
                                         {bytes.size() - 1, 1}, {17, 0}}) {
      CAPTURE(offset);
      const mapped_file m(fd.get(), offset, length, whole);
      CHECK(m.view() == std::string_view(bytes).substr(offset, length));
    }
    // Moved, the bytes go with it.
    mapped_file from(fd.get(), 100, 5000, whole);
    mapped_file to(std::move(from));
    CHECK(to.view() == std::string_view(bytes).substr(100, 5000));
    mapped_file again;
    again = std::move(to);
    CHECK(again.view() == std::string_view(bytes).substr(100, 5000));
  }
  // A range read whole must lie inside the file: one past its end is refused, not padded.
  CHECK_THROWS_AS(mapped_file(fd.get(), bytes.size() - 10, 11, true), std::system_error);
}
