// The driver of DTU's Small Mobile Robot: SMRD's job on the robot's RS485
// bus (the link of protocol/smr/) over a serial adapter (or the simulated
// bus of the simulator program), and SMRD's stream for the client programs
// of port 24901; the transport, timer and event queue are LinkDriver's.
//
// A command in this family's form is one or more whole SMR messages, as a
// client program sends them (`02 11 L 02 12 R` from smr_write) and as the
// JSON commands become. Per period the first speed for each motor wins
// (SMRD's arbitration); a stop (both motors to 0) always wins.
#pragma once

#include <uv.h>

#include <memory>
#include <optional>
#include <string>

#include "flockbridge/bridge/link_driver.hpp"
#include "flockbridge/bridge/smr/family.hpp"
#include "flockbridge/bridge/smr/messages.hpp"
#include "flockbridge/bridge/smr/settings.hpp"
#include "flockbridge/bridge/smr/smrd_client.hpp"
#include "flockbridge/protocol/json_codec.hpp"
#include "flockbridge/protocol/smr/link.hpp"
#include "flockbridge/protocol/smr/odometry.hpp"

namespace flockbridge::bridge::smr {

/// Port 24901's programs on a replay of an SMR's recording: SMRD's stream as
/// they got it then, a whole period for each READY; their commands refused.
[[nodiscard]] std::unique_ptr<NativeReplay> native_replay(const Config& config);

class SmrDriver final : public LinkDriver<protocol::smr::Link, protocol::smr::LinkEvents> {
 public:
  SmrDriver(uv_loop_t* loop, const Config& config, Host& host);
  SmrDriver(const SmrDriver&) = delete;
  SmrDriver& operator=(const SmrDriver&) = delete;
  SmrDriver(SmrDriver&&) = delete;
  SmrDriver& operator=(SmrDriver&&) = delete;
  ~SmrDriver() override;

  [[nodiscard]] std::string_view family() const noexcept override { return kFamily; }
  [[nodiscard]] std::string_view model() const noexcept override { return "smr"; }
  [[nodiscard]] std::span<const std::string> commands() const noexcept override;
  [[nodiscard]] std::string_view device_hint() const noexcept override { return robot_family().device_note; }
  [[nodiscard]] std::string_view native_programs() const noexcept override { return "SMR programs (SMRD's clients)"; }
  [[nodiscard]] protocol::Result<protocol::Done> start() override;
  /// The next event; the stream's messages taken are the ones the clients have.
  [[nodiscard]] std::optional<DriverEvent> next_event() override;
  [[nodiscard]] std::unique_ptr<NativeClient> make_native_client() override;
  [[nodiscard]] std::size_t native_client_limit() const noexcept override { return settings_of(config_).max_clients; }
  [[nodiscard]] protocol::Result<protocol::Bytes> command_from_json(std::string_view cmd,
                                                                    const nlohmann::json& object) const override;
  [[nodiscard]] MotionEffect motion_effect(protocol::ByteView command) const override;
  [[nodiscard]] protocol::Result<protocol::Done> submit(protocol::CommandToken token,
                                                        protocol::ByteView command) override;
  [[nodiscard]] protocol::Result<protocol::Done> reset_pose(protocol::CommandToken token) override;
  [[nodiscard]] const protocol::RobotGeometry& geometry() const override { return model_->robot_geometry(); }
  [[nodiscard]] nlohmann::ordered_json sensor_properties() const override { return protocol::smr::sensor_properties(); }
  [[nodiscard]] protocol::Result<protocol::Done> stop_robot(protocol::CommandToken token) override;
  void add_stats(protocol::StatsSnapshot& snapshot) const override;
  void reload(const Config& config) override;

 private:
  /// Both motors to 0.
  [[nodiscard]] protocol::Bytes last_words() override;

  // protocol::smr::LinkEvents
  void link_changed(protocol::LinkState state, std::string_view reason) override;
  void period_ended() override;
  void period_started(const protocol::smr::PeriodStart& start, protocol::ByteView start_message,
                      protocol::ByteView echoed) override;
  void bus_messages(protocol::ByteView messages) override;
  void period_complete(const protocol::smr::Period& period) override;
  void command_finished(protocol::CommandToken token, const protocol::Error* error) override;
  void power_switch(bool on) override;

  /// Publishes bytes of SMRD's stream.
  void publish_stream(protocol::ByteView bytes);

  protocol::smr::Geometry geometry_;
  protocol::smr::Odometry odometry_;
  /// A module's last answer, for the periods its reply missed (until the link names it silent).
  protocol::smr::ReadingHold hold_;
  protocol::InverseRange ir_range_;
  std::shared_ptr<const protocol::json::RobotStateEncoder> model_;  ///< the common model's geometry
  /// Sets the common model's geometry and IR law from the settings.
  void model_chosen();
  std::optional<std::uint32_t> last_ts_;  ///< the last delivered period's stamp, for speeds
  /// The period as far as the core has taken it (and so every client of
  /// port 24901 has seen it): where a new client starts.
  PeriodSoFar delivered_;
};

}  // namespace flockbridge::bridge::smr
