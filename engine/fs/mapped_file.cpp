#include "engine/fs/mapped_file.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

namespace handoff {

// MAP_PRIVATE + PROT_READ: the view never changes our file and costs page cache only. The
// mapping keeps the file alive on its own, so the caller may close `fd` right away.
// A file truncated under the mapping would raise SIGBUS on access; the files we map live in
// 0700 directories of ours and are never rewritten in place, so nobody else can do that.
mapped_file::mapped_file(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw std::system_error(errno, std::generic_category(), "fstat");
  if (!S_ISREG(st.st_mode)) {
    throw std::system_error(std::make_error_code(std::errc::invalid_argument),
                            "mapped_file: not a regular file");
  }
  *this = mapped_file(fd, 0, static_cast<std::size_t>(st.st_size));
}

// A range of a journal segment's entries: a segment is only ever cut back to where its entries
// end (a torn tail is cut before anything maps it; a sealed segment loses the zeros after its
// entries), so the range stays backed.
mapped_file::mapped_file(int fd, std::size_t offset, std::size_t length, bool read_whole) {
  if (length == 0) return;  // mmap of length 0 is EINVAL; an empty view says it all
  if (read_whole) {
    copy_ = std::make_unique_for_overwrite<char[]>(length);
    for (std::size_t done = 0; done < length;) {
      const ssize_t n = ::pread(fd, copy_.get() + done, length - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw std::system_error(errno, std::generic_category(), "pread");
      if (n == 0)
        throw std::system_error(std::make_error_code(std::errc::invalid_argument), "mapped_file: range past the end");
      done += static_cast<std::size_t>(n);
    }
    data_ = copy_.get();
    size_ = length;
    return;
  }
  static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t start = offset - offset % page;
  mapped_ = length + (offset - start);
  base_ = ::mmap(nullptr, mapped_, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(start));
  if (base_ == MAP_FAILED) {
    base_ = nullptr;
    throw std::system_error(errno, std::generic_category(), "mmap");
  }
  data_ = static_cast<const char*>(base_) + (offset - start);
  size_ = length;
}

mapped_file::~mapped_file() {
  if (base_ != nullptr) ::munmap(base_, mapped_);
}

mapped_file::mapped_file(mapped_file&& other) noexcept
    : copy_(std::move(other.copy_)),
      base_(std::exchange(other.base_, nullptr)),
      mapped_(std::exchange(other.mapped_, 0)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

mapped_file& mapped_file::operator=(mapped_file&& other) noexcept {
  if (this != &other) {
    if (base_ != nullptr) ::munmap(base_, mapped_);
    copy_ = std::move(other.copy_);
    base_ = std::exchange(other.base_, nullptr);
    mapped_ = std::exchange(other.mapped_, 0);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

}  // namespace handoff
