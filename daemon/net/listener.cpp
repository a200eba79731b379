#include "net/listener.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "protocol/socket_location.hpp"

namespace handoff::daemon {
namespace {

[[noreturn]] void fail_to_listen(const std::string& what) { throw std::runtime_error(what); }

std::string errno_text() { return std::strerror(errno); }

}  // namespace

listener::listener(std::filesystem::path socket_path) : path_(std::move(socket_path)) {
  hidden_ = path_;
  hidden_ += ".closing";
  if (path_.native().size() >= sizeof(sockaddr_un::sun_path))
    fail_to_listen("socket path " + path_.string() + " is too long for a Unix socket");
  // The directory must be a real directory of ours that nobody else can enter: the rule clients
  // hold the private fallback to as well.
  rpc::prepare_socket_dir(path_.parent_path());

  // One daemon per socket: the lock is held for the life of the process.
  lock_ = lock_instance(path_);
}

void listener::listen() {

  // We hold the lock, so a socket left at the path is a crashed run's: reclaim it.
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) fail_to_listen(path_.string() + " exists and is not a socket; remove it or pick --socket");
    if (::unlink(path_.c_str()) != 0) fail_to_listen("cannot remove stale socket " + path_.string() + ": " + errno_text());
  }
  ::unlink(hidden_.c_str());  // a socket an idle exit hid, left by a run killed during it

  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) fail_to_listen("socket(): " + errno_text());
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path_.c_str(), path_.native().size() + 1);
  // A tight umask makes the socket 0600 from its first instant; chmod makes sure of it.
  mode_t old = ::umask(0177);
  int rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  int bind_errno = errno;
  ::umask(old);
  if (rc != 0) fail_to_listen("cannot bind " + path_.string() + ": " + std::strerror(bind_errno));
  if (::chmod(path_.c_str(), 0600) != 0) fail_to_listen("cannot chmod " + path_.string() + ": " + errno_text());
  if (::listen(listen_fd_, SOMAXCONN) != 0) fail_to_listen("listen(): " + errno_text());
}

listener::~listener() {
  if (listen_fd_ >= 0) ::close(listen_fd_);
  // We still hold the lock (closed after this body): the socket at the path (or hidden beside it)
  // is ours.
  if (lock_) ::unlink(is_hidden_ ? hidden_.c_str() : path_.c_str());
}

bool listener::hide() noexcept {
  if (is_hidden_) return true;
  is_hidden_ = ::rename(path_.c_str(), hidden_.c_str()) == 0;
  return is_hidden_;
}

bool listener::restore() noexcept {
  if (!is_hidden_) return true;
  is_hidden_ = ::rename(hidden_.c_str(), path_.c_str()) != 0;
  return !is_hidden_;
}

int listener::release_fd() noexcept {
  int fd = listen_fd_;
  listen_fd_ = -1;
  return fd;
}

bool read_peer_credentials(int fd, peer_credentials& out) noexcept {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return false;
  out.uid = cred.uid;
  out.pid = cred.pid;
  return true;
}

}  // namespace handoff::daemon
