// The tinybot's driver: its link (protocol/tinybot) over the transport
// LinkDriver holds, its readings published as the robot model's sensor
// messages, the JSON commands drive, wheels, stop, emergency and
// reset_pose. A command in this family's form is one command line ("V l r\n"
// or "X\n").
#pragma once

#include <uv.h>

#include <memory>
#include <optional>
#include <string>

#include "flockbridge/bridge/link_driver.hpp"
#include "flockbridge/bridge/tinybot/family.hpp"
#include "flockbridge/protocol/json_codec.hpp"
#include "flockbridge/protocol/robot_model.hpp"
#include "flockbridge/protocol/tinybot/tinybot.hpp"

namespace flockbridge::bridge::tinybot {

class TinybotDriver final : public LinkDriver<protocol::tinybot::Link, protocol::tinybot::LinkEvents> {
 public:
  TinybotDriver(uv_loop_t* loop, const Config& config, Host& host);
  TinybotDriver(const TinybotDriver&) = delete;
  TinybotDriver& operator=(const TinybotDriver&) = delete;
  TinybotDriver(TinybotDriver&&) = delete;
  TinybotDriver& operator=(TinybotDriver&&) = delete;
  ~TinybotDriver() override;

  [[nodiscard]] std::string_view family() const noexcept override { return kFamily; }
  [[nodiscard]] std::string_view model() const noexcept override { return kFamily; }
  [[nodiscard]] std::span<const std::string> commands() const noexcept override;
  [[nodiscard]] std::string_view device_hint() const noexcept override { return robot_family().device_note; }
  [[nodiscard]] protocol::Result<protocol::Done> start() override;
  /// Never asked: native_client_limit() is 0, so the core opens no such port.
  [[nodiscard]] std::unique_ptr<NativeClient> make_native_client() override { return nullptr; }
  [[nodiscard]] std::size_t native_client_limit() const noexcept override { return 0; }
  [[nodiscard]] protocol::Result<protocol::Bytes> command_from_json(std::string_view cmd,
                                                                    const nlohmann::json& object) const override;
  [[nodiscard]] MotionEffect motion_effect(protocol::ByteView command) const override;
  [[nodiscard]] protocol::Result<protocol::Done> submit(protocol::CommandToken token,
                                                        protocol::ByteView command) override;
  [[nodiscard]] protocol::Result<protocol::Done> reset_pose(protocol::CommandToken token) override;
  [[nodiscard]] const protocol::RobotGeometry& geometry() const override { return model_->robot_geometry(); }
  [[nodiscard]] nlohmann::ordered_json sensor_properties() const override;
  [[nodiscard]] protocol::Result<protocol::Done> stop_robot(protocol::CommandToken token) override;
  void add_stats(protocol::StatsSnapshot& snapshot) const override;
  void reload(const Config& config) override;

 private:
  [[nodiscard]] protocol::Bytes last_words() override { return link_.shutdown_bytes(); }
  // protocol::tinybot::LinkEvents
  void link_changed(protocol::LinkState state, std::string_view reason) override;
  void reading(const protocol::tinybot::Reading& reading, std::string_view line) override;
  void command_finished(protocol::CommandToken token, const protocol::Error* error) override;

  std::shared_ptr<const protocol::json::RobotStateEncoder> model_;
  protocol::WheelOdometry odometry_{protocol::tinybot::kWheelBaseMm};
  /// The last reading's wheel travel and when it came; none after a
  /// (re)connection or reset_pose, when the next reading starts again.
  std::optional<protocol::tinybot::Reading> last_;
  protocol::SteadyTime last_at_{};
};

}  // namespace flockbridge::bridge::tinybot
