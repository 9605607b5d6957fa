// The Flockbot's driver: the serial link to the robot's Arduino Uno (or to
// the simulated Uno of the simulator program), run by the link controller of
// protocol/flockbot/, with the controller's one timer.
#pragma once

#include <uv.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "flockbridge/bridge/driver.hpp"
#include "flockbridge/bridge/simulator_process.hpp"
#include "flockbridge/bridge/transport.hpp"
#include "flockbridge/bridge/uv.hpp"
#include "flockbridge/protocol/flockbot/link.hpp"

namespace flockbridge::bridge::flockbot {

class FlockbotDriver final : public RobotDriver, private protocol::LinkEvents, private Transport::Listener {
 public:
  FlockbotDriver(uv_loop_t* loop, const Config& config, Host& host);
  FlockbotDriver(const FlockbotDriver&) = delete;
  FlockbotDriver& operator=(const FlockbotDriver&) = delete;
  FlockbotDriver(FlockbotDriver&&) = delete;
  FlockbotDriver& operator=(FlockbotDriver&&) = delete;
  ~FlockbotDriver() override;

  [[nodiscard]] std::string_view family() const noexcept override { return "flockbot"; }
  [[nodiscard]] std::string_view model() const noexcept override { return "flockbot"; }
  [[nodiscard]] std::span<const std::string> commands() const noexcept override { return commands_; }
  [[nodiscard]] protocol::Result<protocol::Done> start() override;
  void stop() override;
  [[nodiscard]] std::optional<DriverEvent> next_event() override;
  [[nodiscard]] std::unique_ptr<NativeClient> make_native_client() override;
  [[nodiscard]] protocol::Result<protocol::Bytes> command_from_json(std::string_view cmd,
                                                                    const nlohmann::json& object) const override;
  [[nodiscard]] MotionEffect motion_effect(protocol::ByteView command) const override;
  [[nodiscard]] protocol::Result<protocol::Done> submit(protocol::CommandToken token,
                                                        protocol::ByteView command) override;
  [[nodiscard]] protocol::Result<protocol::Done> stop_robot(protocol::CommandToken token) override;
  [[nodiscard]] protocol::LinkState link_state() const noexcept override { return link_.state(); }
  [[nodiscard]] const std::string& link_reason() const noexcept override { return link_.reason(); }
  void add_stats(protocol::StatsSnapshot& snapshot) const override;
  void reload(const Config& config) override;

  /// The link controller, for tests that look inside.
  [[nodiscard]] const protocol::LinkController& link() const noexcept { return link_; }

 private:
  // protocol::LinkEvents
  void transmit(protocol::ByteView frame) override;
  void link_changed(protocol::LinkState state, std::string_view reason) override;
  void packet_received(const protocol::UnoPacket& packet, protocol::ByteView payload) override;
  void command_finished(protocol::CommandToken token, const protocol::Error* error, bool acknowledged) override;
  void note(std::string_view what) override;

  // Transport::Listener
  void serial_opened() override;
  void serial_received(protocol::ByteView bytes) override;
  void serial_closed(std::string_view reason) override;

  void push(DriverEvent event);
  /// JSON drive {v_mm_s, w_deg_s} as wheel speeds (DMW), with the configured units.
  [[nodiscard]] protocol::Result<protocol::Bytes> drive_command(const nlohmann::json& object) const;
  /// The robot's CFG values, with the Pi's address filled in when not configured.
  [[nodiscard]] protocol::RobotConfig robot_config() const;
  void arm_link_timer();
  void on_link_timer();

  uv_loop_t* loop_;
  Config config_;
  Host& host_;
  protocol::LinkController link_;
  std::unique_ptr<SimulatorProcess> simulator_;
  std::unique_ptr<Transport> serial_;  ///< the serial device, or a TCP connection
  DeadlineTimer link_timer_;
  std::deque<DriverEvent> events_;
  std::vector<std::string> commands_;  ///< the JSON forms of the command table
  bool stopped_ = false;
};

}  // namespace flockbridge::bridge::flockbot
