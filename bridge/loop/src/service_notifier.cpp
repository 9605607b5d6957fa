#include "flockbridge/bridge/service_notifier.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

#include "flockbridge/bridge/log.hpp"

namespace flockbridge::bridge {

ServiceNotifier::ServiceNotifier() {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path != nullptr && (path[0] == '/' || path[0] == '@')) {
    const std::size_t length = std::strlen(path);
    if (length < sizeof(address_.sun_path)) {
      address_.sun_family = AF_UNIX;
      std::memcpy(address_.sun_path, path, length);
      // '@' names a socket in the abstract namespace, which starts with a NUL.
      if (path[0] == '@') address_.sun_path[0] = '\0';
      address_length_ = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length);
      fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    } else {
      log_warning("NOTIFY_SOCKET is too long for a unix socket; systemd will not hear from the bridge");
    }
  }
  // The watchdog is meant for this process only when WATCHDOG_PID is unset or names it.
  const char* usec = std::getenv("WATCHDOG_USEC");
  const char* pid = std::getenv("WATCHDOG_PID");
  if (usec != nullptr && (pid == nullptr || std::strtoll(pid, nullptr, 10) == ::getpid())) {
    const long long micros = std::strtoll(usec, nullptr, 10);
    if (micros > 0) watchdog_interval_ = std::chrono::milliseconds{std::max(1LL, micros / 2000)};
  }
}

ServiceNotifier::~ServiceNotifier() {
  if (fd_ >= 0) ::close(fd_);
}

void ServiceNotifier::notify(std::string_view state) {
  if (fd_ < 0) return;
  const ssize_t sent = ::sendto(fd_, state.data(), state.size(), MSG_NOSIGNAL,
                                reinterpret_cast<const sockaddr*>(&address_), address_length_);
  if (sent < 0 && !failure_logged_) {
    failure_logged_ = true;
    log_warning(std::string("cannot notify systemd: ") + std::strerror(errno));
  }
}

}  // namespace flockbridge::bridge
