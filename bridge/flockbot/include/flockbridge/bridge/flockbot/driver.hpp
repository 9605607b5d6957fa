// The Flockbot's driver: the serial link to the robot's Arduino Uno (or to
// the simulated Uno of the simulator program), run by the link controller of
// protocol/flockbot/; the transport, timer and event queue are LinkDriver's.
#pragma once

#include <uv.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flockbridge/bridge/flockbot/family.hpp"
#include "flockbridge/bridge/link_driver.hpp"
#include "flockbridge/protocol/flockbot/link.hpp"
#include "flockbridge/protocol/flockbot/robot_model.hpp"
#include "flockbridge/protocol/json_codec.hpp"

namespace flockbridge::bridge::flockbot {

/// Port 2005's programs on a replay of a Flockbot's recording: they get the
/// packets they got then, and are told no to every command.
[[nodiscard]] std::unique_ptr<NativeReplay> native_replay(const Config& config);

class FlockbotDriver final : public LinkDriver<protocol::flockbot::Link, protocol::flockbot::LinkEvents> {
 public:
  FlockbotDriver(uv_loop_t* loop, const Config& config, Host& host);
  FlockbotDriver(const FlockbotDriver&) = delete;
  FlockbotDriver& operator=(const FlockbotDriver&) = delete;
  FlockbotDriver(FlockbotDriver&&) = delete;
  FlockbotDriver& operator=(FlockbotDriver&&) = delete;
  ~FlockbotDriver() override;

  [[nodiscard]] std::string_view family() const noexcept override { return kFamily; }
  [[nodiscard]] std::string_view model() const noexcept override { return "flockbot"; }
  [[nodiscard]] std::span<const std::string> commands() const noexcept override { return commands_; }
  [[nodiscard]] std::string_view device_hint() const noexcept override { return robot_family().device_note; }
  [[nodiscard]] std::string_view native_programs() const noexcept override { return "the Flockbot's own programs"; }
  [[nodiscard]] protocol::Result<protocol::Done> start() override;
  [[nodiscard]] std::unique_ptr<NativeClient> make_native_client() override;
  [[nodiscard]] protocol::Result<protocol::Bytes> command_from_json(std::string_view cmd,
                                                                    const nlohmann::json& object) const override;
  [[nodiscard]] MotionEffect motion_effect(protocol::ByteView command) const override;
  [[nodiscard]] protocol::Result<protocol::Done> submit(protocol::CommandToken token,
                                                        protocol::ByteView command) override;
  [[nodiscard]] protocol::Result<protocol::Done> reset_pose(protocol::CommandToken token) override;
  [[nodiscard]] const protocol::RobotGeometry& geometry() const override;
  [[nodiscard]] nlohmann::ordered_json sensor_properties() const override;
  [[nodiscard]] protocol::Result<protocol::Done> stop_robot(protocol::CommandToken token) override;
  void add_stats(protocol::StatsSnapshot& snapshot) const override;
  void reload(const Config& config) override;

 private:
  /// STOP, when the link is up: the robot is not left driving on its own.
  [[nodiscard]] protocol::Bytes last_words() override;

  // protocol::flockbot::LinkEvents
  void link_changed(protocol::LinkState state, std::string_view reason) override;
  void packet_received(const protocol::flockbot::UnoPacket& packet, protocol::ByteView payload) override;
  void command_finished(protocol::CommandToken token, const protocol::Error* error, bool acknowledged) override;

  /// The robot's CFG values, with the Pi's address filled in when not configured.
  [[nodiscard]] protocol::flockbot::RobotConfig robot_config() const;

  std::vector<std::string> commands_;        ///< the JSON forms of the command table
  protocol::flockbot::FlockbotState state_;  ///< the common robot model's state, from the sensor packets
  std::shared_ptr<const protocol::json::RobotStateEncoder> model_;
  std::optional<SteadyTime> last_sensor_;
};

}  // namespace flockbridge::bridge::flockbot
