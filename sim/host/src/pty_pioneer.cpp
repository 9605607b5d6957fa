#include "flockbridge/sim/host/pty_pioneer.hpp"

#include "flockbridge/sim/host/tcp_device.hpp"

namespace flockbridge::sim {
namespace {

std::unique_ptr<SimDevice> make_device(uv_loop_t* loop, std::optional<std::uint16_t> listen_port,
                                       SimDevice::Listener& listener, const SimDevice::Log& log) {
  if (listen_port) return std::make_unique<TcpDevice>(loop, *listen_port, listener, log);
  return std::make_unique<PtyDevice>(loop, listener, log);
}

}  // namespace

PtyPioneer::PtyPioneer(uv_loop_t* loop, const PtyPioneerSettings& settings, Log log)
    : log_(std::move(log)),
      to_host_(settings.to_host, settings.seed * 2654435761U + 1),
      to_robot_(settings.to_robot, settings.seed * 2654435761U + 2),
      model_settings_(settings.model),
      device_(make_device(loop, settings.listen_port, *this, [this](std::string_view line) { log_(line); })) {
  make_model();
  (void)tick_.init<PtyPioneer, &PtyPioneer::on_tick>(loop, this);
}

void PtyPioneer::make_model() {
  model_.emplace(
      model_settings_, [this](protocol::ByteView packet) { transmit(packet); },
      [this](std::string_view line) { log_(line); });
}

void PtyPioneer::reboot() {
  log_("reboot");
  make_model();
  schedule_tick();
}

PtyPioneer::~PtyPioneer() {
  close();
}

void PtyPioneer::close() {
  device_->close();
  tick_.reset();
}

void PtyPioneer::device_opened() {
  schedule_tick();
}

void PtyPioneer::device_received(protocol::ByteView bytes) {
  if (to_robot_.settings().any()) {
    received_.clear();
    to_robot_.apply(bytes, received_);
    model_->bytes_received(received_, steady_now());
  } else {
    model_->bytes_received(bytes, steady_now());
  }
  schedule_tick();
}

void PtyPioneer::transmit(protocol::ByteView packet) {
  if (silent_) return;
  if (!to_host_.settings().any()) {
    device_->write(packet);
    return;
  }
  sent_.clear();
  to_host_.apply(packet, sent_);
  device_->write(sent_);
}

void PtyPioneer::on_tick() {
  model_->tick(steady_now());
  schedule_tick();
}

void PtyPioneer::schedule_tick() {
  if (const auto deadline = model_->next_deadline()) {
    tick_.start_at(*deadline);
  } else {
    tick_.stop();
  }
}

}  // namespace flockbridge::sim
