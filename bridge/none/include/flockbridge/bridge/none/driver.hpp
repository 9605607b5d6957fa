// The "none" family: a bridge with no robot. It serves the fleet (the class
// hub: flockbridge --hub on the teacher's machine), its JSON port and its
// web pages; there is no robot link to reach, no command to send, and no
// port of a robot family's own programs.
#pragma once

#include <uv.h>

#include <string>

#include "flockbridge/bridge/driver.hpp"
#include "flockbridge/bridge/none/family.hpp"

namespace flockbridge::bridge::none {

class NoRobotDriver final : public RobotDriver {
 public:
  NoRobotDriver(uv_loop_t* loop, const Config& config, RobotDriver::Host& host);

  [[nodiscard]] std::string_view family() const noexcept override { return kFamily; }
  [[nodiscard]] std::string_view model() const noexcept override { return "none"; }
  [[nodiscard]] bool has_robot() const noexcept override { return false; }
  [[nodiscard]] std::span<const std::string> commands() const noexcept override { return {}; }
  [[nodiscard]] protocol::Result<protocol::Done> start() override { return protocol::Done{}; }
  void stop() override {}
  [[nodiscard]] std::optional<DriverEvent> next_event() override { return std::nullopt; }
  [[nodiscard]] std::unique_ptr<NativeClient> make_native_client() override;
  /// No port of a family's own programs: the core opens none.
  [[nodiscard]] std::size_t native_client_limit() const noexcept override { return 0; }
  [[nodiscard]] protocol::Result<protocol::Bytes> command_from_json(std::string_view cmd,
                                                                    const nlohmann::json& object) const override;
  [[nodiscard]] MotionEffect motion_effect(protocol::ByteView /*command*/) const override { return {}; }
  [[nodiscard]] protocol::Result<protocol::Done> submit(protocol::CommandToken token,
                                                        protocol::ByteView command) override;
  [[nodiscard]] protocol::Result<protocol::Done> reset_pose(protocol::CommandToken token) override;
  [[nodiscard]] const protocol::RobotGeometry& geometry() const override;
  /// No robot, no sensor message: no fields of its own.
  [[nodiscard]] nlohmann::ordered_json sensor_properties() const override { return nlohmann::ordered_json::object(); }
  [[nodiscard]] protocol::Result<protocol::Done> stop_robot(protocol::CommandToken token) override;
  [[nodiscard]] protocol::LinkState link_state() const noexcept override { return protocol::LinkState::Down; }
  [[nodiscard]] const std::string& link_reason() const noexcept override { return reason_; }
  void add_stats(protocol::StatsSnapshot& snapshot) const override;
  void reload(const Config& /*config*/) override {}

 private:
  std::string reason_ = "no robot: this bridge only serves the fleet (the class hub)";
};

}  // namespace flockbridge::bridge::none
