// The driver of Pioneer 2/3 and AmigoBot robots: the AROS link of
// protocol/pioneer/ over the robot's HOST serial port (or the simulated robot
// of the simulator program); the transport, timer and event queue are
// LinkDriver's.
//
// A command in this family's form is one or more whole AROS command packets
// back to back (what an ARIA program writes, and what the JSON commands
// become): "drive" is VEL then RVEL. The packets of one command are queued
// together and the command is done when the last is on the line.
#pragma once

#include <uv.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flockbridge/bridge/link_driver.hpp"
#include "flockbridge/bridge/pioneer/family.hpp"
#include "flockbridge/bridge/pioneer/messages.hpp"
#include "flockbridge/protocol/json_codec.hpp"
#include "flockbridge/protocol/pioneer/link.hpp"
#include "flockbridge/protocol/pioneer/models.hpp"

namespace flockbridge::bridge::pioneer {

/// The models robot.model takes: "p2dx, p3dx, ...".
[[nodiscard]] std::string model_names();

class PioneerDriver final : public LinkDriver<protocol::pioneer::Link, protocol::pioneer::LinkEvents> {
 public:
  PioneerDriver(uv_loop_t* loop, const Config& config, Host& host);
  PioneerDriver(const PioneerDriver&) = delete;
  PioneerDriver& operator=(const PioneerDriver&) = delete;
  PioneerDriver(PioneerDriver&&) = delete;
  PioneerDriver& operator=(PioneerDriver&&) = delete;
  ~PioneerDriver() override;

  [[nodiscard]] std::string_view family() const noexcept override { return kFamily; }
  [[nodiscard]] std::string_view model() const noexcept override;
  [[nodiscard]] std::span<const std::string> commands() const noexcept override {
    return protocol::pioneer::json_commands();
  }
  [[nodiscard]] std::string_view device_hint() const noexcept override { return robot_family().device_note; }
  [[nodiscard]] std::string_view native_programs() const noexcept override { return "ARIA programs"; }
  [[nodiscard]] protocol::Result<protocol::Done> start() override;
  [[nodiscard]] std::unique_ptr<NativeClient> make_native_client() override;
  [[nodiscard]] protocol::Result<protocol::Bytes> command_from_json(std::string_view cmd,
                                                                    const nlohmann::json& object) const override;
  [[nodiscard]] MotionEffect motion_effect(protocol::ByteView command) const override;
  [[nodiscard]] protocol::Result<protocol::Done> submit(protocol::CommandToken token,
                                                        protocol::ByteView command) override;
  [[nodiscard]] protocol::Result<protocol::Done> reset_pose(protocol::CommandToken token) override;
  [[nodiscard]] const protocol::RobotGeometry& geometry() const override { return geometry_->robot_geometry(); }
  [[nodiscard]] nlohmann::ordered_json sensor_properties() const override {
    return protocol::pioneer::sensor_properties();
  }
  [[nodiscard]] protocol::Result<protocol::Done> stop_robot(protocol::CommandToken token) override;
  void add_stats(protocol::StatsSnapshot& snapshot) const override;
  void reload(const Config& config) override;

 private:
  /// STOP then CLOSE, so that the robot neither drives on nor waits for its watchdog.
  [[nodiscard]] protocol::Bytes last_words() override;

  // protocol::pioneer::LinkEvents
  void link_changed(protocol::LinkState state, std::string_view reason) override;
  void sip_received(const protocol::pioneer::StandardSip& sip, protocol::Byte type,
                    protocol::ByteView payload) override;
  void packet_received(protocol::Byte type, protocol::ByteView payload) override;
  void command_finished(protocol::CommandToken token, const protocol::Error* error) override;

  /// Tells the core that a client's command is done, with its first error.
  void finish_command(protocol::CommandToken token);
  /// The model whose factors convert SIPs: the configured one, else the one
  /// the robot named.
  void choose_model();
  /// Sets the common model's geometry for the model now known (or not).
  void model_chosen();

  /// A client's command whose packets are on their way.
  struct Parts {
    std::size_t remaining = 0;
    std::optional<protocol::Error> error;
  };

  /// The axes the commands sent so far keep moving (motion_effect()'s
  /// keeps_moving judges a command against them).
  struct Axes {
    bool translating = false;
    bool rotating = false;
    [[nodiscard]] bool moving() const noexcept { return translating || rotating; }
    [[nodiscard]] Axes after(const protocol::pioneer::Command& command) const noexcept;
  };
  Axes axes_;

  const protocol::pioneer::RobotModel* model_ = nullptr;
  std::optional<protocol::pioneer::PoseTracker> pose_;
  std::shared_ptr<const protocol::json::RobotStateEncoder> geometry_;  ///< the model's
  std::vector<std::optional<double>> sonar_mm_;    ///< each disc's last reading (a SIP carries a few)
  std::map<protocol::CommandToken, Parts> parts_;  ///< by the client's token
};

}  // namespace flockbridge::bridge::pioneer
