// Socket activation (daemon/system/activation.hpp): handoffd under the real systemd-socket-activate
// serves on the socket it was passed and leaves it in place; what is not a listening Unix
// stream socket at fd 3 is refused with the reason; variables meant for another pid are ignored.
#include <doctest/doctest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <thread>

#include "support/child_process.hpp"
#include "support/raw_client.hpp"
#include "support/socket_probe.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace handoff::test;

namespace {

constexpr const char* socket_activate = "/usr/bin/systemd-socket-activate";

bool socket_at(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

// A private directory (0700), as handoffd requires of its socket's.
fs::path private_dir(const temp_dir& dir, const std::string& name) {
  fs::create_directory(dir / name);
  fs::permissions(dir / name, fs::perms::owner_all, fs::perm_options::replace);
  return dir / name;
}

template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // the poll interval
  }
  return true;
}

// Starts handoffd directly with `fd3` at fd 3 and LISTEN_FDS=`fds` for its own pid; returns its
// exit status and log once it gave up.
std::pair<int, std::string> refused_activation(int fd3, const std::string& fds = "1") {
  temp_dir dir("activation-refused");
  child_process d({{HANDOFFD_PATH, "--socket", (dir / "unused.sock").string(), "--artifact-dir",
                    (dir / "a").string(), "--queue-dir", (dir / "q").string()},
                   {{"LISTEN_FDS", fds}, {"LISTEN_FDNAMES", "handoffd.socket"}},
                   {},
                   dir / "log",
                   fd3,
                   true});
  const int status = d.wait(std::chrono::seconds(10));
  CHECK_FALSE(fs::exists(dir / "unused.sock"));  // it did not fall back to a socket of its own
  return {status, d.log()};
}

}  // namespace

TEST_CASE("under systemd-socket-activate, handoffd serves completed -> wait on the passed socket and leaves it") {
  REQUIRE_MESSAGE(fs::exists(socket_activate), "systemd-socket-activate is missing: apt-get install systemd");
  temp_dir dir("activation");
  const fs::path socket = private_dir(dir, "run") / "handoffd.sock";
  // Where handoffd would bind a socket of its own: nothing must appear there.
  const fs::path runtime = private_dir(dir, "xdg");
  // systemd-socket-activate passes on only the variables named with -E.
  child_process d({{socket_activate, "-l", socket.string(), "-E", "XDG_RUNTIME_DIR=" + runtime.string(),
                    HANDOFFD_PATH, "--artifact-dir", (dir / "artifacts").string(), "--queue-dir",
                    (dir / "queue").string(), "--log-level", "debug"},
                   {},
                   {"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES", "NOTIFY_SOCKET"},
                   dir / "log"});
  // Accepting, not only there: the file appears at bind(), a connect before listen() is refused.
  // The probe's connection is the first, the one that makes systemd-socket-activate exec handoffd.
  REQUIRE_MESSAGE(eventually([&] { return socket_accepts(socket); }), d.log());

  {
    raw_client c(socket);
    REQUIRE_MESSAGE(c.call("initialize", {{"clientName", "activation-test"}}).contains("result"), d.log());
    const std::string text = numbered_report(40000, 500, "activated");
    json done = c.call("subagent/completed", {{"parentId", "p"}, {"childId", "c"}, {"title", "t"},
                                              {"status", "done"}, {"finalText", text}});
    REQUIRE_MESSAGE(done.contains("result"), done.dump());
    json r = c.call("subagent/wait", {{"parentId", "p"}, {"childIds", {"c"}}, {"timeoutMs", 5000}});
    REQUIRE_MESSAGE(r.contains("result"), r.dump());
    REQUIRE(r["result"]["sections"].size() == 1);
    const json& s = r["result"]["sections"][0];
    CHECK(s["truncated"] == true);
    CHECK(s["text"].get<std::string>().find("END activated") != std::string::npos);
    CHECK(s["artifact"]["saved"] == true);
    CHECK(file_sha256(s["artifact"]["path"].get<std::string>()) == done["result"]["sha256"]);

    // A handoffd started by hand on the same path refuses, rather than taking the socket over.
    child_process intruder({{HANDOFFD_PATH, "--socket", socket.string(), "--artifact-dir",
                             (dir / "artifacts2").string(), "--queue-dir", (dir / "queue2").string()},
                            {}, {"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"}, dir / "intruder.log"});
    CHECK(intruder.wait() != 0);
    CHECK_MESSAGE(intruder.log().find("another handoffd is already serving") != std::string::npos, intruder.log());
    CHECK(c.call("daemon/status", nullptr)["result"]["store"]["files"] == 1);
  }

  CHECK(d.stop(SIGTERM) == 0);
  const std::string log = d.log();
  CHECK_MESSAGE(log.find("listening on " + socket.string()) != std::string::npos, log);
  CHECK_FALSE(fs::exists(runtime / "handoff"));
  // The socket is the service manager's: still there after handoffd is gone.
  CHECK(socket_at(socket));
}

TEST_CASE("LISTEN_PID naming another process is ignored, and handoffd binds (and later removes) its own socket") {
  temp_dir dir("activation-other-pid");
  const fs::path socket = private_dir(dir, "run") / "handoffd.sock";
  child_process d({{HANDOFFD_PATH, "--socket", socket.string(), "--artifact-dir", (dir / "a").string(),
                    "--queue-dir", (dir / "q").string()},
                   {{"LISTEN_PID", "1"}, {"LISTEN_FDS", "1"}},
                   {},
                   dir / "log"});
  REQUIRE_MESSAGE(eventually([&] { return socket_accepts(socket); }), d.log());
  {
    raw_client c(socket);
    CHECK(c.call("daemon/status", nullptr).contains("result"));
  }
  CHECK(d.stop(SIGTERM) == 0);
  CHECK_FALSE(fs::exists(socket));  // its own socket: removed at exit
}

TEST_CASE("activation with anything but one listening Unix stream socket at fd 3 is refused, saying why") {
  SUBCASE("a regular file") {
    temp_dir dir("fd3-file");
    const int fd = ::open((dir / "f").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    auto [status, log] = refused_activation(fd);
    ::close(fd);
    CHECK(status == 1);
    CHECK_MESSAGE(log.find("fd 3 is not a socket") != std::string::npos, log);
  }
  SUBCASE("a Unix stream socket that does not listen") {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    auto [status, log] = refused_activation(fd);
    ::close(fd);
    CHECK(status == 1);
    CHECK_MESSAGE(log.find("fd 3 is not listening") != std::string::npos, log);
  }
  SUBCASE("a datagram socket") {
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    auto [status, log] = refused_activation(fd);
    ::close(fd);
    CHECK(status == 1);
    CHECK_MESSAGE(log.find("not a stream socket") != std::string::npos, log);
  }
  SUBCASE("a listening TCP socket") {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd, 1) == 0);
    auto [status, log] = refused_activation(fd);
    ::close(fd);
    CHECK(status == 1);
    CHECK_MESSAGE(log.find("not a Unix socket") != std::string::npos, log);
  }
  SUBCASE("two sockets") {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    auto [status, log] = refused_activation(fd, "2");
    ::close(fd);
    CHECK(status == 1);
    CHECK_MESSAGE(log.find("exactly one socket") != std::string::npos, log);
  }
}
