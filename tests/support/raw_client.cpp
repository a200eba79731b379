#include "support/raw_client.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <poll.h>
#include <sstream>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "engine/fs/sha256.hpp"

namespace handoff::test {

raw_client::raw_client(const std::filesystem::path& socket, framing f) : framing_(f) {
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error("socket() failed");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket.c_str());
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    close();  // no destructor runs for a constructor that throws
    throw std::runtime_error("connect(" + socket.string() + "): " + std::strerror(err));
  }
}

raw_client::~raw_client() { close(); }

void raw_client::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void raw_client::send_raw(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("send: ") + std::strerror(errno));
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void raw_client::send(const json& message) {
  std::string payload = message.dump();
  if (framing_ == framing::ndjson) send_raw(payload + "\n");
  else send_raw("Content-Length: " + std::to_string(payload.size()) + "\r\n\r\n" + payload);
}

std::optional<std::string> raw_client::take_frame() {
  if (framing_ == framing::ndjson) {
    auto nl = buffer_.find('\n');
    if (nl == std::string::npos) return std::nullopt;
    std::string frame = buffer_.substr(0, nl);
    buffer_.erase(0, nl + 1);
    return frame;
  }
  auto end = buffer_.find("\r\n\r\n");
  if (end == std::string::npos) return std::nullopt;
  auto pos = buffer_.find("Content-Length:");
  if (pos == std::string::npos || pos > end) throw std::runtime_error("reply without Content-Length");
  std::size_t length = std::stoul(buffer_.substr(pos + 15, end - pos - 15));
  if (buffer_.size() < end + 4 + length) return std::nullopt;
  std::string frame = buffer_.substr(end + 4, length);
  buffer_.erase(0, end + 4 + length);
  return frame;
}

std::optional<std::string> raw_client::read_frame(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto frame = take_frame()) return frame;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{fd_, POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(left.count()));
    if (rc <= 0) continue;
    char chunk[65536];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return std::nullopt;
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

json raw_client::read(std::chrono::milliseconds timeout) {
  if (!stash_.empty()) {
    json j = std::move(stash_.front());
    stash_.erase(stash_.begin());
    return j;
  }
  auto frame = read_frame(timeout);
  if (!frame) throw std::runtime_error("no message from the daemon in time");
  return json::parse(*frame);
}

json raw_client::call(std::string_view method, const json& params, std::chrono::milliseconds timeout) {
  long long id = next_id_++;
  json request = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) request["params"] = params;
  send(request);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) throw std::runtime_error("no reply to " + std::string(method));
    auto frame = read_frame(left);
    if (!frame) throw std::runtime_error("no reply to " + std::string(method) + " (timeout or EOF)");
    json message = json::parse(*frame);
    if (message.contains("id") && message["id"] == id && !message.contains("method")) return message;
    stash_.push_back(std::move(message));
  }
}

void raw_client::notify(std::string_view method, const json& params) {
  send(json{{"jsonrpc", "2.0"}, {"method", method}, {"params", params}});
}

bool raw_client::closed_within(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char chunk[4096];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n == 0) return true;
    if (n < 0 && errno == ECONNRESET) return true;
    if (n > 0) buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

std::string numbered_report(std::size_t bytes, std::size_t lines, const std::string& tag) {
  if (lines < 3) throw std::invalid_argument("numbered_report needs >= 3 lines");
  std::vector<std::string> rows;
  rows.push_back("BEGIN " + tag);
  for (std::size_t i = 1; i + 1 < lines; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04zu ", i);
    rows.push_back(buf + tag);
  }
  rows.push_back("END " + tag);
  std::size_t base = lines - 1;
  for (const auto& r : rows) base += r.size();
  if (base > bytes) throw std::invalid_argument("numbered_report: too many lines for the bytes");
  std::size_t pad = bytes - base, middle = lines - 2;
  static const std::string filler = " lorem ipsum dolor sit amet consectetur adipiscing elit";
  for (std::size_t i = 0; i < middle; ++i) {
    std::size_t want = pad / middle + (i < pad % middle ? 1 : 0);
    std::string& row = rows[i + 1];
    while (want > 0) {
      std::size_t take = std::min(want, filler.size());
      row.append(filler, 0, take);
      want -= take;
    }
  }
  std::string out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i) out += '\n';
    out += rows[i];
  }
  return out;
}

std::string file_sha256(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return handoff::sha256_hex(ss.str());
}

}  // namespace handoff::test
