#include "flockbridge/bridge/tinybot/driver.hpp"

#include <array>
#include <cmath>
#include <numbers>

#include "flockbridge/protocol/json_arguments.hpp"

namespace flockbridge::bridge::tinybot {
namespace {

namespace bot = protocol::tinybot;
using namespace protocol::json_arguments;
using ordered = nlohmann::ordered_json;

/// A reading as its sensor message: the family's fields, then the robot model's.
class SensorMessage final : public RobotMessage {
 public:
  SensorMessage(const bot::Reading& reading, protocol::RobotState state,
                std::shared_ptr<const protocol::json::RobotStateEncoder> model)
      : reading_(reading), state_(std::move(state)), model_(std::move(model)) {}
  [[nodiscard]] bool is_sensor() const noexcept override { return true; }
  [[nodiscard]] SharedBuffer encode(Encoding encoding, std::uint64_t seq, double unix_seconds) const override {
    if (encoding != Encoding::Json) return nullptr;
    const ordered own{{"type", "sensor"},
                      {"seq", seq},
                      {"ts", unix_seconds},
                      {"odometer", {{"left_mm", reading_.left_mm}, {"right_mm", reading_.right_mm}}},
                      {"battery_mv", reading_.battery_mv}};
    std::string text = model_->add_to(own.dump(), state_);
    text.push_back('\n');
    return make_buffer(std::move(text));
  }

 private:
  bot::Reading reading_;
  protocol::RobotState state_;
  std::shared_ptr<const protocol::json::RobotStateEncoder> model_;
};

/// Wheel speeds in mm/s as a command line, or why they are too fast.
protocol::Result<protocol::Bytes> wheel_speeds(std::string_view cmd, double left, double right) {
  if (std::abs(left) > bot::kMaxWheelMmS || std::abs(right) > bot::kMaxWheelMmS) {
    return argument_error(
        cmd, "faster than the wheels go: a wheel's most is " + std::to_string(bot::kMaxWheelMmS) + " mm/s");
  }
  return bot::encode_speeds({static_cast<int>(std::lround(left)), static_cast<int>(std::lround(right))});
}

}  // namespace

TinybotDriver::TinybotDriver(uv_loop_t* loop, const Config& config, Host& host)
    : LinkDriver(loop, config, host),
      model_(std::make_shared<protocol::json::RobotStateEncoder>(bot::robot_geometry())) {}

TinybotDriver::~TinybotDriver() {
  stop();
}

std::span<const std::string> TinybotDriver::commands() const noexcept {
  static const std::array<std::string, 5> names{"drive", "wheels", "stop", "emergency", "reset_pose"};
  return names;
}

protocol::Result<protocol::Done> TinybotDriver::start() {
  return start_link({"--robot", std::string(kFamily)}, "simulated tinybot");
}

protocol::Result<protocol::Bytes> TinybotDriver::command_from_json(std::string_view cmd,
                                                                   const nlohmann::json& object) const {
  if (cmd == "stop" || cmd == "emergency") {
    if (auto checked = only(cmd, object, {}); !checked) return checked.error();
    return bot::encode_stop();
  }
  if (cmd == "drive") {
    auto drive = drive_arguments(cmd, object, 10000, 3600);
    if (!drive) return drive.error();
    const double v = drive.value().v_mm_s;
    const double turn = drive.value().w_deg_s * std::numbers::pi / 180 * bot::kWheelBaseMm / 2;  // each wheel's share
    return wheel_speeds(cmd, v - turn, v + turn);
  }
  if (cmd == "wheels") {
    auto wheels = wheel_arguments(cmd, object, 10000);
    if (!wheels) return wheels.error();
    return wheel_speeds(cmd, wheels.value().left_mm_s, wheels.value().right_mm_s);
  }
  std::string known;
  for (const std::string& name : commands()) known += (known.empty() ? "" : ", ") + name;
  return protocol::Error{"unknown command '" + std::string(cmd) + "'; a tinybot takes " + known};
}

MotionEffect TinybotDriver::motion_effect(protocol::ByteView command) const {
  const auto speeds = bot::read_command(command);
  if (!speeds) return {};
  if (*speeds == bot::Speeds{}) return MotionEffect{.stops = true};
  return MotionEffect{.motion = true, .keeps_moving = true};
}

protocol::Result<protocol::Done> TinybotDriver::submit(protocol::CommandToken token, protocol::ByteView command) {
  if (!bot::read_command(command)) return protocol::Error{"not a tinybot command line"};
  auto sent = link_.submit(token, command);
  arm_link_timer();
  return sent;
}

protocol::Result<protocol::Done> TinybotDriver::reset_pose(protocol::CommandToken token) {
  // The tinybot keeps no pose: the bridge's sum of its wheels starts again.
  odometry_.reset();
  last_.reset();
  command_finished(token, nullptr);
  return protocol::Done{};
}

nlohmann::ordered_json TinybotDriver::sensor_properties() const {
  return nlohmann::ordered_json::parse(R"json({
    "odometer": {"type": "object", "description": "each wheel's travel since the robot started, forward positive",
      "properties": {"left_mm": {"type": "integer"}, "right_mm": {"type": "integer"}}},
    "battery_mv": {"type": "integer", "description": "the battery, as the robot reports it"}
  })json");
}

protocol::Result<protocol::Done> TinybotDriver::stop_robot(protocol::CommandToken token) {
  return submit(token, bot::encode_stop());
}

void TinybotDriver::add_stats(protocol::StatsSnapshot& snapshot) const {
  const bot::LinkStats s = link_.stats();
  snapshot.link_state = link_.state();
  snapshot.link_counters = {{"lines", s.lines},
                            {"readings", s.readings},
                            {"unknown_lines", s.unknown_lines},
                            {"dropped_lines", s.dropped_lines},
                            {"pings", s.pings},
                            {"times_lost", s.times_lost}};
  snapshot.commands = protocol::unacknowledged_commands(s.commands_sent, s.commands_failed);
  snapshot.link_summary = "lines in " + std::to_string(s.lines) + " (readings " + std::to_string(s.readings) +
                          ", unknown " + std::to_string(s.unknown_lines) + ", too long " +
                          std::to_string(s.dropped_lines) + "), pings " + std::to_string(s.pings);
}

void TinybotDriver::reload(const Config& config) {
  config_ = config;
  arm_link_timer();
}

void TinybotDriver::link_changed(protocol::LinkState state, std::string_view reason) {
  // A robot found again may have started again: its wheels' travel from 0.
  if (state != protocol::LinkState::Up) last_.reset();
  push(driver_event::LinkChanged{state, std::string(reason)});
}

void TinybotDriver::reading(const bot::Reading& reading, std::string_view /*line*/) {
  const protocol::SteadyTime now = steady_now();
  if (last_) {
    const double seconds = std::chrono::duration<double>(now - last_at_).count();
    odometry_.step(static_cast<double>(reading.left_mm - last_->left_mm),
                   static_cast<double>(reading.right_mm - last_->right_mm), seconds > 0 ? seconds : 0.05);
  }
  last_ = reading;
  last_at_ = now;
  protocol::RobotState state;
  state.pose = odometry_.pose();
  state.v_mm_s = odometry_.speed();
  state.w_deg_s = odometry_.turn_rate() * 180 / std::numbers::pi;
  state.battery_v = reading.battery_mv / 1000.0;
  for (const auto& range : reading.ranges_mm) {
    state.ranges_mm.push_back(range ? std::optional<double>(*range) : std::nullopt);
  }
  state.bumped = reading.bumped ? 1 : 0;
  driver_event::Published published;
  published.message = std::make_shared<SensorMessage>(reading, std::move(state), model_);
  push(std::move(published));
}

void TinybotDriver::command_finished(protocol::CommandToken token, const protocol::Error* error) {
  driver_event::CommandDone done;
  done.token = token;
  if (error != nullptr) done.error = *error;
  push(std::move(done));
}

}  // namespace flockbridge::bridge::tinybot
