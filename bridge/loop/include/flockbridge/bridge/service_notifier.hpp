// Tells systemd how the daemon is doing, by its notification protocol
// (sd_notify(3)): datagrams of "KEY=VALUE" lines sent to the unix socket that
// $NOTIFY_SOCKET names. A unit of Type=notify waits for READY=1, shows
// STATUS= in `systemctl status`, restarts the service when WATCHDOG=1 stops
// coming for WatchdogSec, and knows from STOPPING=1 and RELOADING=1 what is
// happening. Outside systemd ($NOTIFY_SOCKET unset) every call does nothing.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace flockbridge::bridge {

class ServiceNotifier {
 public:
  /// Reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID.
  ServiceNotifier();
  ServiceNotifier(const ServiceNotifier&) = delete;
  ServiceNotifier& operator=(const ServiceNotifier&) = delete;
  ~ServiceNotifier();

  [[nodiscard]] bool enabled() const noexcept { return fd_ >= 0; }
  /// Sends one datagram, "READY=1\nSTATUS=..." for example. Failures are
  /// logged once: the daemon works on without them.
  void notify(std::string_view state);
  /// How often to send WATCHDOG=1 (half of WATCHDOG_USEC), when systemd
  /// watches this process.
  [[nodiscard]] std::optional<std::chrono::milliseconds> watchdog_interval() const noexcept {
    return watchdog_interval_;
  }

 private:
  int fd_ = -1;
  sockaddr_un address_{};
  socklen_t address_length_ = 0;
  std::optional<std::chrono::milliseconds> watchdog_interval_;
  bool failure_logged_ = false;
};

}  // namespace flockbridge::bridge
