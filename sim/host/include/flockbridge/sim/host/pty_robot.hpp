// A simulated robot whose model plays its controller's side of the serial
// protocol on a pseudo-terminal (PtyDevice) or served over TCP (TcpDevice),
// with noise on the line when asked: how a family's sim/<family>/host/ folder
// puts its model on a device. These robots do not reset when their port is
// opened (a controller that resets on DTR needs a class of its own).
//
// `Model` is built from (settings, transmit, log) and is fed
// bytes_received(bytes, now) and tick(now) at its next_deadline(). Its
// ModelSettings' `world` is the room it drives in. Its family declares, in
// the model's namespace (found by argument-dependent lookup),
// `run_model_command(Model&, command, words, say)` (the commands only this
// robot knows; false when `command` is none of them) and
// `model_wheels_turning(const Model&)` (whether a wheel is told to turn).
#pragma once

#include <uv.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "flockbridge/bridge/uv.hpp"
#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/sim/host/pty_device.hpp"
#include "flockbridge/sim/host/sim_robot.hpp"
#include "flockbridge/sim/host/tcp_device.hpp"
#include "flockbridge/sim/line_faults.hpp"

namespace flockbridge::sim {

template <typename Model, typename ModelSettings>
class PtyRobot final : public SimRobot, private SimDevice::Listener {
 public:
  /// Throws std::invalid_argument for settings the model refuses.
  PtyRobot(uv_loop_t* loop, ModelSettings settings, const SimulatedLine& line, Log log)
      : log_(std::move(log)),
        to_host_(line.to_host, line.seed * 2654435761U + 1),
        to_robot_(line.to_robot, line.seed * 2654435761U + 2),
        model_settings_(std::move(settings)),
        device_(make_device(loop, line.listen_port)) {
    make_model();
    (void)tick_.template init<PtyRobot, &PtyRobot::on_tick>(loop, this);
  }
  PtyRobot(const PtyRobot&) = delete;
  PtyRobot& operator=(const PtyRobot&) = delete;
  ~PtyRobot() override { close(); }

  [[nodiscard]] protocol::Result<protocol::Done> plug_in(const std::string& link_path) override {
    return device_->plug_in(link_path);
  }
  void unplug() override { device_->unplug(); }
  void close() override {
    device_->close();
    tick_.reset();
  }
  /// Power-cycles the robot while the port stays open.
  void reboot() override {
    log_("reboot");
    make_model();
    schedule_tick();
  }
  void set_silent(bool silent) override { silent_ = silent; }
  [[nodiscard]] std::string device_path() const override { return device_->device_path(); }
  [[nodiscard]] const LineFaults& to_host_faults() const override { return to_host_; }
  [[nodiscard]] const LineFaults& to_robot_faults() const override { return to_robot_; }
  [[nodiscard]] const World* world() const override { return &model_settings_.world; }
  bool run_command(const std::string& command, std::istringstream& words, const Log& say) override {
    return run_model_command(*model_, command, words, say);
  }
  [[nodiscard]] bool wheels_turning() const override { return model_wheels_turning(*model_); }

  [[nodiscard]] Model& model() noexcept { return *model_; }
  [[nodiscard]] bool connected() const noexcept { return device_->connected(); }

 private:
  std::unique_ptr<SimDevice> make_device(uv_loop_t* loop, std::optional<std::uint16_t> listen_port) {
    const SimDevice::Log log = [this](std::string_view line) { log_(line); };
    SimDevice::Listener& listener = *this;
    if (listen_port) return std::make_unique<TcpDevice>(loop, *listen_port, listener, log);
    return std::make_unique<PtyDevice>(loop, listener, log);
  }

  void make_model() {
    model_.emplace(
        model_settings_, [this](protocol::ByteView bytes) { transmit(bytes); },
        [this](std::string_view line) { log_(line); });
  }

  void device_opened() override { schedule_tick(); }
  void device_received(protocol::ByteView bytes) override {
    if (to_robot_.settings().any()) {
      received_.clear();
      to_robot_.apply(bytes, received_);
      model_->bytes_received(received_, steady_now());
    } else {
      model_->bytes_received(bytes, steady_now());
    }
    schedule_tick();
  }
  void device_closed() override {}

  void transmit(protocol::ByteView bytes) {
    if (silent_) return;
    if (!to_host_.settings().any()) {
      device_->write(bytes);
      return;
    }
    sent_.clear();
    to_host_.apply(bytes, sent_);
    device_->write(sent_);
  }

  void on_tick() {
    model_->tick(steady_now());
    schedule_tick();
  }

  void schedule_tick() {
    if (const auto deadline = model_->next_deadline()) {
      tick_.start_at(*deadline);
    } else {
      tick_.stop();
    }
  }

  Log log_;
  LineFaults to_host_;
  LineFaults to_robot_;
  protocol::Bytes received_;  ///< what the robot received, after the line's noise
  protocol::Bytes sent_;      ///< what the host receives, after the line's noise
  ModelSettings model_settings_;
  std::optional<Model> model_;
  bool silent_ = false;
  DeadlineTimer tick_;
  std::unique_ptr<SimDevice> device_;
};

}  // namespace flockbridge::sim
