// The simulated Pioneer or AmigoBot (sim/aros) on a pseudo-terminal
// (PtyDevice) or served over TCP (TcpDevice), with noise on the line when
// asked: the robot behind
// `flockbridge --robot pioneer --simulate`, the simulator program and the
// tests. Unlike the Uno, an AROS robot does not reset when its port is
// opened: a robot left open by an earlier client goes on sending SIPs.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "flockbridge/bridge/uv.hpp"
#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/sim/aros/pioneer_model.hpp"
#include "flockbridge/sim/host/pty_device.hpp"
#include "flockbridge/sim/line_faults.hpp"

namespace flockbridge::sim {

struct PtyPioneerSettings {
  aros::PioneerModelSettings model;
  LineFaultSettings to_host;   ///< noise on what the robot sends
  LineFaultSettings to_robot;  ///< noise on what the robot receives
  std::uint32_t seed = 1;
  /// Served over TCP on 127.0.0.1 at this port instead of a pseudo-terminal
  /// (0: a free port), as MobileSim serves its robot; none: a pseudo-terminal.
  std::optional<std::uint16_t> listen_port;
};

class PtyPioneer final : private SimDevice::Listener {
 public:
  using Log = std::function<void(std::string_view)>;

  /// Throws std::invalid_argument for a model that is not in the table.
  PtyPioneer(uv_loop_t* loop, const PtyPioneerSettings& settings, Log log);
  PtyPioneer(const PtyPioneer&) = delete;
  PtyPioneer& operator=(const PtyPioneer&) = delete;
  ~PtyPioneer() override;

  [[nodiscard]] protocol::Result<protocol::Done> plug_in(const std::string& link_path) {
    return device_->plug_in(link_path);
  }
  void unplug() { device_->unplug(); }
  [[nodiscard]] protocol::Result<protocol::Done> replug() { return device_->plug_in(device_->link_path()); }
  void close();
  /// Power-cycles the robot while the port stays open: it forgets its
  /// client, stops, and waits for SYNC0 again.
  void reboot();
  /// Stops or resumes sending anything (the robot's side of a broken cable).
  void set_silent(bool silent) noexcept { silent_ = silent; }

  [[nodiscard]] aros::PioneerModel& model() noexcept { return *model_; }
  [[nodiscard]] const LineFaults& to_host_faults() const noexcept { return to_host_; }
  [[nodiscard]] const LineFaults& to_robot_faults() const noexcept { return to_robot_; }
  /// What the host opens: a path, or tcp:127.0.0.1:PORT.
  [[nodiscard]] std::string device_path() const { return device_->device_path(); }
  [[nodiscard]] bool connected() const noexcept { return device_->connected(); }

 private:
  void make_model();
  void device_opened() override;
  void device_received(protocol::ByteView bytes) override;
  void device_closed() override {}

  void transmit(protocol::ByteView packet);
  void on_tick();
  void schedule_tick();

  Log log_;
  LineFaults to_host_;
  LineFaults to_robot_;
  protocol::Bytes received_;  ///< what the robot received, after the line's noise
  protocol::Bytes sent_;      ///< what the host receives, after the line's noise
  aros::PioneerModelSettings model_settings_;
  std::optional<aros::PioneerModel> model_;
  bool silent_ = false;
  DeadlineTimer tick_;
  std::unique_ptr<SimDevice> device_;
};

}  // namespace flockbridge::sim
