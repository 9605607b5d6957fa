// A replay: the driver of a bridge that serves a recording (recorder.hpp)
// as if its robot were attached (flockbridge --replay FILE). It is the
// recorded robot to every client: the same family, model, commands and
// geometry in its hello (which says it is a replay), the robot's messages as
// they were recorded, byte for byte, at the recorded pace (or --replay-speed
// times it), the link's changes as they happened. What the family's own
// programs got was recorded too (/native), and the family's client of its
// port (its NativeReplay, from the families table) serves it to them.
//
// A recording cannot move: every command is refused (code "replay"), but
// stop and emergency, which a stopped robot has done already, are answered
// ok (and emergency latches, as everywhere). Once the recording has played
// to its end the link goes down, saying so; the bridge serves on. It begins
// when its first client connects (replay.wait), so that a program started
// after the bridge sees the whole run.
#pragma once

#include <uv.h>

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flockbridge/bridge/driver.hpp"
#include "flockbridge/bridge/recording_file.hpp"
#include "flockbridge/bridge/uv.hpp"

namespace flockbridge::bridge::replay {

class ReplayDriver final : public RobotDriver {
 public:
  /// `native`: the family's own programs' client on a replay; null when the
  /// family's programs cannot connect to one (no port is opened).
  ReplayDriver(uv_loop_t* loop, const Config& config, Host& host, std::unique_ptr<NativeReplay> native);
  ReplayDriver(const ReplayDriver&) = delete;
  ReplayDriver& operator=(const ReplayDriver&) = delete;
  ReplayDriver(ReplayDriver&&) = delete;
  ReplayDriver& operator=(ReplayDriver&&) = delete;
  ~ReplayDriver() override;

  [[nodiscard]] std::string_view family() const noexcept override { return identity_.family; }
  [[nodiscard]] std::string_view model() const noexcept override { return identity_.model; }
  [[nodiscard]] std::span<const std::string> commands() const noexcept override { return commands_; }
  [[nodiscard]] bool simulated() const noexcept override { return identity_.simulated; }
  [[nodiscard]] std::optional<std::array<double, 4>> simulated_room() const override { return room_; }
  [[nodiscard]] std::vector<std::array<double, 4>> simulated_boxes() const override { return boxes_; }
  [[nodiscard]] const protocol::json::ReplayDescription* replay() const noexcept override { return &description_; }

  [[nodiscard]] protocol::Result<protocol::Done> start() override;
  void stop() override;
  void client_arrived() override;
  [[nodiscard]] std::optional<DriverEvent> next_event() override;
  [[nodiscard]] std::unique_ptr<NativeClient> make_native_client() override;
  [[nodiscard]] std::size_t native_client_limit() const noexcept override;
  [[nodiscard]] std::string_view native_programs() const noexcept override {
    return native_ ? "the recorded robot's own programs" : "";
  }
  [[nodiscard]] protocol::Result<protocol::Bytes> command_from_json(std::string_view cmd,
                                                                    const nlohmann::json& object) const override;
  [[nodiscard]] MotionEffect motion_effect(protocol::ByteView command) const override;
  [[nodiscard]] protocol::Result<protocol::Done> submit(protocol::CommandToken token,
                                                        protocol::ByteView command) override;
  [[nodiscard]] protocol::Result<protocol::Done> reset_pose(protocol::CommandToken token) override;
  [[nodiscard]] const protocol::RobotGeometry& geometry() const override { return geometry_; }
  [[nodiscard]] nlohmann::ordered_json sensor_properties() const override;
  [[nodiscard]] protocol::Result<protocol::Done> stop_robot(protocol::CommandToken token) override;
  [[nodiscard]] protocol::LinkState link_state() const noexcept override { return link_state_; }
  [[nodiscard]] const std::string& link_reason() const noexcept override { return link_reason_; }
  void add_stats(protocol::StatsSnapshot& snapshot) const override;
  void reload(const Config& /*config*/) override {}

 private:
  /// Plays from the first message on.
  void begin();
  /// Plays every message that is due, then waits for the next.
  void play();
  /// Sends one recorded message on (with its native form when the next is it).
  void play_one(const RecordedMessage& message);
  void link_changed(protocol::LinkState state, std::string reason);
  void ended();
  void push(DriverEvent event);
  [[nodiscard]] protocol::Error refusal() const;

  uv_loop_t* loop_;
  Config config_;
  Host& host_;
  std::unique_ptr<NativeReplay> native_;
  std::unique_ptr<RecordingFile> file_;
  std::string open_error_;  ///< why the recording could not be read, for start()
  RecordingIdentity identity_;
  std::string file_name_;
  protocol::json::ReplayDescription description_;
  std::vector<std::string> commands_;
  protocol::RobotGeometry geometry_;
  std::optional<std::array<double, 4>> room_;
  std::vector<std::array<double, 4>> boxes_;

  DeadlineTimer timer_;
  std::optional<RecordedMessage> next_;  ///< read, not yet due
  std::uint64_t first_time_ = 0;         ///< the first message's recorded time
  SteadyTime started_{};
  bool waiting_ = false;  ///< for the first client
  bool playing_ = false;
  protocol::LinkState link_state_ = protocol::LinkState::Up;
  std::string link_reason_;
  std::deque<DriverEvent> events_;
  std::uint64_t played_ = 0;
  std::uint64_t sensors_played_ = 0;
  std::uint64_t late_max_us_ = 0;  ///< the latest a message went out after its time
};

}  // namespace flockbridge::bridge::replay
