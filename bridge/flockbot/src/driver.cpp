#include "flockbridge/bridge/flockbot/driver.hpp"

#include <array>
#include <chrono>
#include <cmath>
#include <tuple>

#include "flockbridge/bridge/flockbot/native_client.hpp"
#include "flockbridge/bridge/flockbot/settings.hpp"
#include "flockbridge/bridge/host_address.hpp"
#include "flockbridge/bridge/log.hpp"
#include "flockbridge/bridge/wire.hpp"
#include "flockbridge/protocol/flockbot/commands.hpp"
#include "flockbridge/protocol/flockbot/frame.hpp"
#include "flockbridge/protocol/flockbot/json.hpp"
#include "flockbridge/protocol/json_codec.hpp"

namespace flockbridge::bridge::flockbot {
namespace {

/// An Uno packet for clients: a sensor reading (port 2005's SP, JSON's
/// "sensor" with the configured units) or another packet (DMC, EMG, ...).
class UnoMessage final : public RobotMessage {
 public:
  UnoMessage(const protocol::flockbot::UnoPacket& packet, protocol::ByteView payload,
             const protocol::flockbot::SensorUnits& units, protocol::RobotState state,
             std::shared_ptr<const protocol::json::RobotStateEncoder> model)
      : packet_(packet),
        payload_(payload.begin(), payload.end()),
        units_(units),
        state_(std::move(state)),
        model_(std::move(model)) {}

  [[nodiscard]] bool is_sensor() const noexcept override {
    return packet_.kind == protocol::flockbot::UnoPacketKind::Sensor;
  }
  [[nodiscard]] SharedBuffer encode(Encoding encoding, std::uint64_t seq, double unix_seconds) const override {
    if (encoding == Encoding::Native) return is_sensor() ? native_sensor(payload_) : native_packet(payload_);
    if (is_sensor()) {
      return wire::json_line(
          model_->add_to(protocol::flockbot::sensor_json(packet_.sensor, seq, unix_seconds, units_), state_));
    }
    if (packet_.kind == protocol::flockbot::UnoPacketKind::Emergency)
      return wire::json_line(protocol::json::emergency());
    return wire::json_line(protocol::flockbot::packet_json(payload_));
  }

 private:
  protocol::flockbot::UnoPacket packet_;
  protocol::Bytes payload_;
  protocol::flockbot::SensorUnits units_;
  protocol::RobotState state_;
  std::shared_ptr<const protocol::json::RobotStateEncoder> model_;
};

}  // namespace

FlockbotDriver::FlockbotDriver(uv_loop_t* loop, const Config& config, Host& host)
    : LinkDriver(loop, config, host, link_settings(config), settings_of(config).robot),
      state_(model_units(config), model_body(config)),
      model_(std::make_shared<protocol::json::RobotStateEncoder>(
          protocol::flockbot::robot_geometry(model_units(config), model_body(config)))) {
  for (const protocol::flockbot::CommandSpec& spec : protocol::flockbot::command_table()) {
    if (spec.json_form) commands_.emplace_back(spec.name);
  }
  commands_.emplace_back("drive");
  commands_.emplace_back("reset_pose");
}

FlockbotDriver::~FlockbotDriver() {
  stop();
}

protocol::Result<protocol::Done> FlockbotDriver::start() {
  link_.set_robot_config(robot_config());
  return start_link({"--robot", "flockbot", "--rate-hz", std::to_string(settings_of(config_).sim_rate_hz)},
                    "simulated Uno");
}

protocol::Bytes FlockbotDriver::last_words() {
  if (link_.state() != protocol::LinkState::Up) return {};
  return protocol::flockbot::encode_frame(protocol::as_bytes(protocol::flockbot::kStopCode));
}

std::unique_ptr<NativeReplay> native_replay(const Config& /*config*/) {
  class Replay final : public NativeReplay {
   public:
    [[nodiscard]] std::unique_ptr<NativeClient> make_native_client() override {
      return std::make_unique<FlockbotClient>();
    }
  };
  return std::make_unique<Replay>();
}

std::unique_ptr<NativeClient> FlockbotDriver::make_native_client() {
  return std::make_unique<FlockbotClient>();
}

protocol::Result<protocol::Bytes> FlockbotDriver::command_from_json(std::string_view cmd,
                                                                    const nlohmann::json& object) const {
  if (cmd == "drive") return protocol::flockbot::drive_command(object, settings_of(config_).units);
  auto command = protocol::flockbot::parse_json_command(cmd, object);
  if (!command) return command.error();
  return std::move(command.value().payload);
}

MotionEffect FlockbotDriver::motion_effect(protocol::ByteView command) const {
  MotionEffect effect;
  effect.stops = protocol::flockbot::is_stop(command);
  effect.emergency =
      protocol::flockbot::is_emergency(command);  // the 2014 client never sends EMG: a program's EMG is one
  if (const auto spec = protocol::flockbot::check_command(command); spec && !effect.stops) {
    effect.motion = spec.value()->motion;
    effect.keeps_moving = effect.motion && protocol::flockbot::sets_robot_moving(*spec.value(), command);
  }
  return effect;
}

protocol::Result<protocol::Done> FlockbotDriver::submit(protocol::CommandToken token, protocol::ByteView command) {
  auto submitted = link_.submit(token, command, steady_now());
  if (submitted && protocol::flockbot::is_odometer_reset(command)) state_.expect_odometer_reset();
  arm_link_timer();
  return submitted;
}

protocol::Result<protocol::Done> FlockbotDriver::reset_pose(protocol::CommandToken token) {
  // The pose is the bridge's own sum of the odometers' steps: the Uno's
  // odometers, which programs on port 2005 may be reading, are left alone.
  state_.reset_pose();
  command_finished(token, nullptr, false);
  return protocol::Done{};
}

const protocol::RobotGeometry& FlockbotDriver::geometry() const {
  return model_->robot_geometry();
}

protocol::Result<protocol::Done> FlockbotDriver::stop_robot(protocol::CommandToken token) {
  return submit(token, protocol::as_bytes(protocol::flockbot::kStopCode));
}

void FlockbotDriver::add_stats(protocol::StatsSnapshot& snapshot) const {
  snapshot.link_state = link_.state();
  const protocol::flockbot::LinkStats s = link_.stats();
  snapshot.link_counters = protocol::flockbot::link_counters(s);
  snapshot.commands = {.sent = s.commands_sent,
                       .acknowledged = s.commands_acknowledged,
                       .delivered = s.commands_delivered,
                       .confirmed = s.commands_confirmed,
                       .unconfirmed = s.commands_unconfirmed,
                       .failed = s.commands_failed};
  snapshot.link_summary = "frames in " + std::to_string(s.decoder.frames) + " out " + std::to_string(s.frames_sent) +
                          ", bad checksum " + std::to_string(s.decoder.bad_checksum) + ", implausible " +
                          std::to_string(s.implausible) + ", NAKs sent " + std::to_string(s.naks_sent) + " received " +
                          std::to_string(s.naks_received) + ", retransmits " + std::to_string(s.retransmits);
}

void FlockbotDriver::reload(const Config& config) {
  config_ = config;
  state_.configure(model_units(config_), model_body(config_));
  model_ = std::make_shared<protocol::json::RobotStateEncoder>(
      protocol::flockbot::robot_geometry(model_units(config_), model_body(config_)));
  link_.set_settings(link_settings(config_));
  // Compared with what the Uno was last sent, so that a change of the Pi's
  // own address since then counts too.
  if (const protocol::flockbot::RobotConfig robot = robot_config(); robot != link_.robot_config()) {
    link_.set_robot_config(robot);
    link_.reconfigure(steady_now(), "the robot's settings were reloaded; configuring it again");
  }
  arm_link_timer();
}

protocol::flockbot::RobotConfig FlockbotDriver::robot_config() const {
  protocol::flockbot::RobotConfig robot = settings_of(config_).robot;
  if (settings_of(config_).robot_ip.empty()) {
    if (const auto octets = local_ipv4_octets()) std::tie(robot.ip3, robot.ip4) = *octets;
  }
  return robot;
}

void FlockbotDriver::link_changed(protocol::LinkState state, std::string_view reason) {
  // A link that comes up again may be an Uno that rebooted, its odometers at 0.
  if (state == protocol::LinkState::Up) state_.expect_odometer_reset();
  push(driver_event::LinkChanged{state, std::string(reason)});
}

void FlockbotDriver::packet_received(const protocol::flockbot::UnoPacket& packet, protocol::ByteView payload) {
  driver_event::Published published;
  protocol::RobotState state;
  if (packet.kind == protocol::flockbot::UnoPacketKind::Sensor) {
    const SteadyTime now = steady_now();
    const double seconds = last_sensor_ ? std::chrono::duration<double>(now - *last_sensor_).count() : 0.0;
    last_sensor_ = now;
    state = state_.update(packet.sensor, seconds);
  }
  published.message =
      std::make_shared<UnoMessage>(packet, payload, settings_of(config_).units, std::move(state), model_);
  if (packet.kind == protocol::flockbot::UnoPacketKind::Emergency) {
    published.robot_stopped = true;
    published.warning = "the robot sent an emergency stop (EMG)";
  }
  if (packet.kind == protocol::flockbot::UnoPacketKind::MoveComplete) published.robot_stopped = true;
  push(std::move(published));
}

void FlockbotDriver::command_finished(protocol::CommandToken token, const protocol::Error* error, bool acknowledged) {
  driver_event::CommandDone done;
  done.token = token;
  if (error != nullptr) done.error = *error;
  done.confirmed = acknowledged;
  push(std::move(done));
}

nlohmann::ordered_json FlockbotDriver::sensor_properties() const {
  // The family's own fields of its sensor message (the recording's schema).
  return nlohmann::ordered_json::parse(R"json({
    "battery": {"type": "integer", "description": "the battery's raw reading (battery_v is in volts)"},
    "ir": {"type": "array", "items": {"type": "integer"}, "description": "the five IR sensors' raw readings, left to right"},
    "l_bump": {"type": "integer"}, "h_bump": {"type": "integer"},
    "odometer": {"type": "object", "properties": {"left": {"type": "integer"}, "right": {"type": "integer"}, "avg": {"type": "integer"}}},
    "wheel_watcher": {"type": "object", "properties": {"left": {"type": "integer"}, "right": {"type": "integer"}}}
  })json");
}

}  // namespace flockbridge::bridge::flockbot
