#include "flockbridge/bridge/service_status.hpp"

#include <cstdint>

namespace flockbridge::bridge {

std::string ServiceStatus::describe(protocol::LinkState state, std::string_view reason, std::size_t clients) {
  std::string status = "robot link " + std::string(protocol::link_state_name(state));
  if (state != protocol::LinkState::Up && !reason.empty()) status += " (" + std::string(reason) + ")";
  return status + "; " + std::to_string(clients) + (clients == 1 ? " client" : " clients");
}

protocol::Result<protocol::Done> ServiceStatus::ready(std::string status) {
  status_ = std::move(status);
  notifier_.notify("READY=1\nSTATUS=" + status_);
  const auto interval = notifier_.watchdog_interval();
  if (!interval || watchdog_timer_) return protocol::Done{};
  if (watchdog_timer_.init(this, [this](uv_timer_t* t) { return uv_timer_init(loop_, t); }) < 0) {
    return protocol::Error{"cannot create the loop's timers"};
  }
  const auto every = static_cast<std::uint64_t>(interval->count());
  uv_timer_start(
      watchdog_timer_.get(),
      [](uv_timer_t* timer) {
        if (auto* self = owner_of<ServiceStatus>(timer)) self->notifier_.notify("WATCHDOG=1");
      },
      0, every);
  return protocol::Done{};
}

void ServiceStatus::update(std::string status) {
  // Nothing before READY=1, and nothing when systemd is not listening.
  if (!notifier_.enabled() || status_.empty() || status == status_) return;
  status_ = std::move(status);
  notifier_.notify("STATUS=" + status_);
}

void ServiceStatus::reloading() {
  notifier_.notify("RELOADING=1\nSTATUS=reloading the configuration");
}

void ServiceStatus::stopping() {
  notifier_.notify("STOPPING=1\nSTATUS=stopping");
  watchdog_timer_.reset();
}

}  // namespace flockbridge::bridge
