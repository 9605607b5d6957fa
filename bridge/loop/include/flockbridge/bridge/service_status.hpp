// What systemd hears of the bridge (service_notifier.hpp carries it):
// READY=1 once everything is bound, STATUS= with the robot link's state and
// the number of clients whenever either changes, WATCHDOG=1 fed from the
// loop itself (a loop that hangs stops feeding it and gets the service
// restarted), RELOADING=1 and STOPPING=1. Outside systemd it does nothing.
#pragma once

#include <uv.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "flockbridge/bridge/service_notifier.hpp"
#include "flockbridge/bridge/uv.hpp"
#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/protocol/robot_link.hpp"

namespace flockbridge::bridge {

class ServiceStatus {
 public:
  explicit ServiceStatus(uv_loop_t* loop) : loop_(loop) {}

  /// "robot link up; 3 clients", with why the link is not up.
  [[nodiscard]] static std::string describe(protocol::LinkState state, std::string_view reason, std::size_t clients);

  /// READY=1 and the status; feeds the watchdog from now on, when systemd watches.
  [[nodiscard]] protocol::Result<protocol::Done> ready(std::string status);
  /// STATUS=, when it changed since systemd last heard it (and after READY=1 only).
  void update(std::string status);
  void reloading();
  /// STOPPING=1; the watchdog is no longer fed.
  void stopping();

 private:
  uv_loop_t* loop_;
  ServiceNotifier notifier_;
  UvHandle<uv_timer_t> watchdog_timer_;
  std::string status_;  ///< as systemd last heard it; empty until READY=1
};

}  // namespace flockbridge::bridge
