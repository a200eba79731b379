// Readiness and watchdog (daemon/system/notify.hpp, daemon/system/service_manager.hpp): a fake service
// manager's NOTIFY_SOCKET, as a filesystem path and as an abstract '@' name, receives READY=1
// once handoffd accepts connections, WATCHDOG=1 at half of WATCHDOG_USEC, and STOPPING=1.
#include <doctest/doctest.h>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "support/child_process.hpp"
#include "support/raw_client.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace handoff::test;
using std::chrono::milliseconds;

namespace {

// The manager's end: a datagram socket bound at "/path" or "@abstract".
class fake_manager {
 public:
  explicit fake_manager(const std::string& address) : address_(address) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    REQUIRE(address.size() < sizeof addr.sun_path);
    std::memcpy(addr.sun_path, address.data(), address.size());
    socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address.size());
    if (address[0] == '@') addr.sun_path[0] = '\0';
    REQUIRE_MESSAGE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) == 0, std::strerror(errno));
  }
  ~fake_manager() { ::close(fd_); }
  fake_manager(const fake_manager&) = delete;
  fake_manager& operator=(const fake_manager&) = delete;

  // The next datagram, or nullopt when none came within `timeout`.
  std::optional<std::string> receive(milliseconds timeout) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) return std::nullopt;
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0) return std::nullopt;
    return std::string(buf, static_cast<std::size_t>(n));
  }
  // Skips WATCHDOG=1 pings; the next other message, or nullopt.
  std::optional<std::string> next_state(milliseconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
      auto m = receive(std::chrono::duration_cast<milliseconds>(until - std::chrono::steady_clock::now()));
      if (m && *m != "WATCHDOG=1") return m;
    }
    return std::nullopt;
  }
  const std::string& address() const { return address_; }

 private:
  std::string address_;
  int fd_ = -1;
};

struct daemon_under_manager {
  temp_dir dir{"notify"};
  fs::path socket;
  std::optional<child_process> process;

  explicit daemon_under_manager(std::vector<std::pair<std::string, std::string>> env) {
    fs::create_directory(dir / "run");
    fs::permissions(dir / "run", fs::perms::owner_all, fs::perm_options::replace);
    socket = dir / "run" / "handoffd.sock";
    process.emplace(child_process::spec{{HANDOFFD_PATH, "--socket", socket.string(), "--artifact-dir",
                                         (dir / "a").string(), "--queue-dir", (dir / "q").string(),
                                         "--log-level", "debug"},
                                        std::move(env),
                                        {"WATCHDOG_PID", "LISTEN_PID", "LISTEN_FDS"},
                                        dir / "log"});
  }
};

// The whole conversation, for one kind of address.
void ready_watchdog_stopping(fake_manager& manager) {
  daemon_under_manager d({{"NOTIFY_SOCKET", manager.address()}, {"WATCHDOG_USEC", "200000"}});

  const auto ready = manager.next_state(std::chrono::seconds(15));
  REQUIRE_MESSAGE(ready.has_value(), d.process->log());
  CHECK(ready->starts_with("READY=1\n"));
  CHECK(ready->find("STATUS=serving on " + d.socket.string()) != std::string::npos);
  {
    // READY=1 promises a listening socket: a client may connect at once.
    raw_client c(d.socket);
    CHECK(c.call("daemon/status", nullptr).contains("result"));
  }

  // WATCHDOG_USEC=200000: a ping every 100 ms.
  int pings = 0;
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < milliseconds(1000)) {
    if (auto m = manager.receive(milliseconds(300)); m) {
      CHECK(*m == "WATCHDOG=1");
      ++pings;
    }
  }
  CHECK(pings >= 4);
  CHECK(pings <= 15);

  ::kill(d.process->pid(), SIGTERM);
  const auto stopping = manager.next_state(std::chrono::seconds(10));
  REQUIRE(stopping.has_value());
  CHECK(stopping->starts_with("STOPPING=1"));
  CHECK(d.process->wait() == 0);
  // Not one ping after STOPPING=1 (the drain runs without them).
  while (auto m = manager.receive(milliseconds(200))) CHECK(*m != "WATCHDOG=1");
}

}  // namespace

TEST_CASE("NOTIFY_SOCKET as a filesystem path receives READY=1, WATCHDOG=1 and STOPPING=1") {
  temp_dir dir("notify-path");
  fake_manager manager((dir / "notify").string());
  ready_watchdog_stopping(manager);
}

TEST_CASE("NOTIFY_SOCKET as an abstract @name receives READY=1, WATCHDOG=1 and STOPPING=1") {
  fake_manager manager("@handoff-notify-test-" + std::to_string(::getpid()));
  ready_watchdog_stopping(manager);
}

TEST_CASE("WATCHDOG_PID naming another process gets READY=1 but no pings, they are not ours to send") {
  temp_dir dir("notify-other-pid");
  fake_manager manager((dir / "notify").string());
  daemon_under_manager d({{"NOTIFY_SOCKET", manager.address()}, {"WATCHDOG_USEC", "200000"}, {"WATCHDOG_PID", "1"}});
  const auto ready = manager.receive(std::chrono::seconds(15));
  REQUIRE(ready.has_value());
  CHECK(ready->starts_with("READY=1"));
  CHECK_FALSE(manager.receive(milliseconds(600)).has_value());
  CHECK(d.process->stop() == 0);
}

TEST_CASE("a malformed NOTIFY_SOCKET is reported and otherwise ignored") {
  daemon_under_manager d({{"NOTIFY_SOCKET", "relative/notify"}, {"WATCHDOG_USEC", "200000"}});
  bool served = false;
  for (int i = 0; i < 500 && !served; ++i) {
    try {
      raw_client c(d.socket);
      served = c.call("daemon/status", nullptr).contains("result");
    } catch (const std::exception&) {
      std::this_thread::sleep_for(milliseconds(10));  // not listening yet: the poll interval, 5 s in all
    }
  }
  CHECK(served);
  CHECK(d.process->stop() == 0);
  CHECK(d.process->log().find("NOTIFY_SOCKET \"relative/notify\" is neither") != std::string::npos);
}
