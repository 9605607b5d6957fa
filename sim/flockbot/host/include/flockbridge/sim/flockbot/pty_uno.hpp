// The simulated Uno on a pseudo-terminal (PtyDevice): the device end of a
// serial cable for the simulator program (`flockbridge --simulate`, the
// tests). It
// resets when the host opens the port, as a real Uno does on DTR.
#pragma once

#include <uv.h>

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "flockbridge/bridge/uv.hpp"
#include "flockbridge/protocol/bytes.hpp"
#include "flockbridge/sim/flockbot/uno_model.hpp"
#include "flockbridge/sim/host/pty_device.hpp"
#include "flockbridge/sim/host/sim_robot.hpp"
#include "flockbridge/sim/line_faults.hpp"

namespace flockbridge::sim::flockbot {

struct PtyUnoSettings {
  UnoModelSettings model;
  /// Report every sensor packet sent ("tx-sensor <hex>"), every frame whose
  /// damage a receiver's checksum cannot see ("tx-undetectable <sent> -> <received>"),
  /// and every damaged frame the Uno took for good ("rx-damaged <received> was <sent>",
  /// exact while the line only flips bits, so that both streams stay aligned).
  bool report_frames = false;
};

class PtyUno final : public SimRobot, private PtyDevice::Listener {
 public:
  PtyUno(uv_loop_t* loop, PtyUnoSettings settings, const SimulatedLine& on_line, Log log);
  PtyUno(const PtyUno&) = delete;
  PtyUno& operator=(const PtyUno&) = delete;
  ~PtyUno() override;

  /// Creates a new pseudo-terminal. With a non-empty `link_path`, that path
  /// becomes a symlink to the slave end (replacing an old link atomically).
  [[nodiscard]] protocol::Result<protocol::Done> plug_in(const std::string& link_path) override;
  /// Closes the pseudo-terminal and removes the link: the device vanishes.
  void unplug() override;
  /// Plugs in again at the same link path.
  [[nodiscard]] protocol::Result<protocol::Done> replug() { return plug_in(device_.link_path()); }
  /// Resets the Uno as a brown-out would, while the port stays open.
  void reboot() override;
  /// Stops everything; the loop can then finish.
  void close() override;
  void set_silent(bool silent) override { model_.set_silent(silent); }

  [[nodiscard]] UnoModel& model() noexcept { return model_; }
  /// The link path if there is one, else the slave's /dev/pts path.
  [[nodiscard]] std::string device_path() const override { return device_.device_path(); }
  [[nodiscard]] const World* world() const override { return &model_.world(); }
  [[nodiscard]] bool connected() const noexcept { return device_.connected(); }
  [[nodiscard]] const LineFaults& to_host_faults() const override { return to_host_; }
  [[nodiscard]] const LineFaults& to_robot_faults() const override { return to_uno_; }
  [[nodiscard]] std::string_view robot_side() const noexcept override { return "to-uno"; }
  /// nak-next [N], corrupt-next, emergency, packet TEXT, burst [N], bump L H.
  bool run_command(const std::string& command, std::istringstream& words, const Log& say) override;
  [[nodiscard]] bool wheels_turning() const override { return model_.wheels_turning(); }

 private:
  // PtyDevice::Listener
  void device_opened() override;
  void device_received(protocol::ByteView bytes) override;
  void device_closed() override;

  void on_tick();
  void schedule_tick();
  void transmit(protocol::ByteView frame);
  void report_if_undetectable(protocol::ByteView sent);
  void check_received_frame(protocol::ByteView payload, std::uint64_t position);

  uv_loop_t* loop_;
  Log log_;
  bool report_frames_;
  LineFaults to_host_;
  LineFaults to_uno_;
  protocol::Bytes damaged_;
  /// The frames the host really sent, by stream position (recent ones only).
  protocol::flockbot::FrameDecoder sent_frames_{protocol::flockbot::kMaxPayloadLimit};
  std::map<std::uint64_t, protocol::Bytes> sent_by_position_;
  UnoModel model_;
  DeadlineTimer tick_;
  PtyDevice device_;
};

}  // namespace flockbridge::sim::flockbot
