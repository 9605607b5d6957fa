// The systemd notification protocol, against a real unix datagram socket
// standing in for systemd's.
#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "flockbridge/bridge/service_notifier.hpp"

using namespace flockbridge::bridge;

namespace {

/// A datagram socket bound at `path` (a leading '@': the abstract namespace).
struct FakeSystemd {
  explicit FakeSystemd(std::string where) : path(std::move(where)) {
    fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    path.copy(address.sun_path, path.size());
    if (path[0] == '@') address.sun_path[0] = '\0';
    const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size());
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), length) == 0);
    timeval timeout{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    ::setenv("NOTIFY_SOCKET", path.c_str(), 1);
  }
  ~FakeSystemd() {
    ::close(fd);
    if (path[0] == '/') ::unlink(path.c_str());
    ::unsetenv("NOTIFY_SOCKET");
    ::unsetenv("WATCHDOG_USEC");
    ::unsetenv("WATCHDOG_PID");
  }
  FakeSystemd(const FakeSystemd&) = delete;
  FakeSystemd& operator=(const FakeSystemd&) = delete;

  std::string receive() const {
    char buffer[1024];
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    return n < 0 ? std::string("(nothing)") : std::string(buffer, static_cast<std::size_t>(n));
  }

  std::string path;
  int fd;
};

std::string socket_path() {
  return (std::filesystem::temp_directory_path() / ("flockbridge-notify-" + std::to_string(::getpid()))).string();
}

}  // namespace

TEST_CASE("outside systemd the notifier does nothing") {
  ::unsetenv("NOTIFY_SOCKET");
  ::unsetenv("WATCHDOG_USEC");
  ServiceNotifier notifier;
  CHECK_FALSE(notifier.enabled());
  CHECK_FALSE(notifier.watchdog_interval());
  notifier.notify("READY=1");
}

TEST_CASE("notifications reach the socket NOTIFY_SOCKET names, a path or an abstract name") {
  for (const std::string& path : {socket_path(), "@" + socket_path()}) {
    CAPTURE(path);
    FakeSystemd systemd(path);
    ServiceNotifier notifier;
    REQUIRE(notifier.enabled());
    notifier.notify("READY=1\nSTATUS=robot link up; 0 clients");
    CHECK(systemd.receive() == "READY=1\nSTATUS=robot link up; 0 clients");
    notifier.notify("STOPPING=1");
    CHECK(systemd.receive() == "STOPPING=1");
  }
}

TEST_CASE("the watchdog is fed twice per WATCHDOG_USEC, and only by the process it names") {
  FakeSystemd systemd(socket_path());
  ::setenv("WATCHDOG_USEC", "20000000", 1);
  {
    ServiceNotifier notifier;
    REQUIRE(notifier.watchdog_interval());
    CHECK(notifier.watchdog_interval()->count() == 10000);
  }
  ::setenv("WATCHDOG_PID", std::to_string(::getpid()).c_str(), 1);
  CHECK(ServiceNotifier{}.watchdog_interval());
  ::setenv("WATCHDOG_PID", std::to_string(::getpid() + 1).c_str(), 1);
  CHECK_FALSE(ServiceNotifier{}.watchdog_interval());
}
