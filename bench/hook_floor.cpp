// The floors the Claude Code hook is measured against (bench/hook_bench.cpp), as a program of
// its own so that its process start is paid like the hook's:
//   hook_floor              reads all of stdin and exits: starting a trivial C++ program
//   hook_floor FILE         also hashes it (SHA-256) and writes it to FILE with one fsync
#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "engine/fs/sha256.hpp"

int main(int argc, char** argv) {
  std::string in;
  char buffer[64 * 1024];
  for (ssize_t n; (n = ::read(STDIN_FILENO, buffer, sizeof buffer)) > 0;) in.append(buffer, static_cast<std::size_t>(n));
  if (argc < 2) return in.empty() ? 1 : 0;
  const std::string hash = handoff::sha256_hex(in);
  const int fd = ::open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return 1;
  const bool ok = ::write(fd, in.data(), in.size()) == static_cast<ssize_t>(in.size()) && ::fsync(fd) == 0;
  ::close(fd);
  return ok && hash.size() == 64 ? 0 : 1;
}
