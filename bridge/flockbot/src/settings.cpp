#include "flockbridge/bridge/flockbot/settings.hpp"

#include <arpa/inet.h>

#include <cstdint>
#include <optional>
#include <sstream>
#include <vector>

#include "flockbridge/bridge/setting_rows.hpp"

namespace flockbridge::bridge::flockbot {

using namespace rows;

protocol::flockbot::LinkSettings link_settings(const Config& config) {
  protocol::flockbot::LinkSettings settings = settings_of(config).link;
  settings.baud = static_cast<unsigned>(config.baud);
  return settings;
}

namespace {

/// "90, 45, 0, -45, -90" as five angles; nothing when it is not that.
std::optional<std::vector<double>> parse_ir_deg(const std::string& text) {
  std::vector<double> angles;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::istringstream number(item);
    double value = 0;
    if (!(number >> value) || !(number >> std::ws).eof() || value < -360 || value > 360) return std::nullopt;
    angles.push_back(value);
  }
  if (angles.size() != protocol::flockbot::kIrCount) return std::nullopt;
  return angles;
}

}  // namespace

protocol::flockbot::SensorUnits model_units(const Config& config) {
  protocol::flockbot::SensorUnits units = settings_of(config).units;
  if (!config.simulate) return units;
  using Sim = protocol::flockbot::SimulatedUno;
  const protocol::flockbot::SensorUnits sim = Sim::units();
  if (units.battery_volts_per_count == 0) units.battery_volts_per_count = sim.battery_volts_per_count;
  if (units.odometer_mm_per_count == 0) units.odometer_mm_per_count = sim.odometer_mm_per_count;
  if (units.wheel_watcher_mm_per_count == 0) units.wheel_watcher_mm_per_count = sim.wheel_watcher_mm_per_count;
  return units;
}

protocol::flockbot::FlockbotBody model_body(const Config& config) {
  protocol::flockbot::FlockbotBody body = settings_of(config).body;
  if (!config.simulate) return body;
  const protocol::flockbot::FlockbotBody sim = protocol::flockbot::SimulatedUno::body();
  if (body.radius_mm == 0) body.radius_mm = sim.radius_mm;
  if (body.ir_deg.empty()) body.ir_deg = sim.ir_deg;
  if (body.ir_mount_mm == 0) body.ir_mount_mm = sim.ir_mount_mm;
  if (!body.ir_range.known()) body.ir_range = sim.ir_range;
  return body;
}

FamilyRows settings_rows() {
  FamilyRows family;
  std::vector<Setting>& s = family.rows;
  s.push_back(real(
      {"simulator", "rate_hz", "--sim-rate-hz", "Sensor packets per second of the simulated Uno.", kRestart},
      [](auto& c) -> auto& { return settings_of(c).sim_rate_hz; }, 0.1, 2000));
  s.push_back(whole(
      {"flockbot", "id", "--robot-id", "Robot id sent in CFG.", kLive},
      [](auto& c) -> auto& { return settings_of(c).robot.id; }, 0, 255));
  s.push_back(whole(
      {"flockbot", "gripper", "--gripper", "Gripper type sent in CFG.", kLive},
      [](auto& c) -> auto& { return settings_of(c).robot.gripper; }, 0, 255));
  s.push_back(whole(
      {"flockbot", "left_wheel_stop", "--left-wheel-stop",
       "Left wheel servo's stop point sent in CFG (the pulse, in microseconds, at which it stands "
       "still).",
       kLive},
      [](auto& c) -> auto& { return settings_of(c).robot.left_wheel_stop; }, 0, 65535));
  s.push_back(whole(
      {"flockbot", "right_wheel_stop", "--right-wheel-stop", "Right wheel servo's stop point sent in CFG.", kLive},
      [](auto& c) -> auto& { return settings_of(c).robot.right_wheel_stop; }, 0, 65535));
  s.push_back(whole(
      {"flockbot", "servo_model", "--servo-model", "Servo model sent in CFG.", kLive},
      [](auto& c) -> auto& { return settings_of(c).robot.servo_model; }, 0, 255));
  {
    Setting ip = text(
        {"flockbot", "ip", "--robot-ip",
         "IPv4 address whose last two octets CFG carries; \"\": this machine's first non-loopback "
         "IPv4 address when the bridge starts.",
         kLive},
        [](auto& c) -> auto& { return settings_of(c).robot_ip; });
    ip.check = [](const Value& value) -> std::string {
      const auto& address = std::get<std::string>(value);
      in_addr scratch{};
      return address.empty() || ::inet_pton(AF_INET, address.c_str(), &scratch) == 1
                 ? ""
                 : "an IPv4 address such as 192.168.1.23, or \"\"";
    };
    ip.set = [](Config& config, const Value& value) {
      FlockbotSettings& flockbot = settings_of(config);
      flockbot.robot_ip = std::get<std::string>(value);
      in_addr address{};
      if (::inet_pton(AF_INET, flockbot.robot_ip.c_str(), &address) == 1) {
        const auto* octets = reinterpret_cast<const std::uint8_t*>(&address.s_addr);
        flockbot.robot.ip3 = octets[2];
        flockbot.robot.ip4 = octets[3];
      }
    };
    s.push_back(std::move(ip));
  }

  s.push_back(real(
      {"flockbot.units", "battery_volts_per_count", "--battery-volts-per-count",
       "Volts per count of the battery reading, published as battery_v (0: not published).", kLive},
      [](auto& c) -> auto& { return settings_of(c).units.battery_volts_per_count; }, 0, 1000));
  s.push_back(real(
      {"flockbot.units", "ir_volts_per_count", "--ir-volts-per-count",
       "Volts per count of the IR readings (an Uno's ADC: 5/1023), published as ir_v (0: not "
       "published).",
       kLive},
      [](auto& c) -> auto& { return settings_of(c).units.ir_volts_per_count; }, 0, 1000));
  s.push_back(real(
      {"flockbot.units", "odometer_mm_per_count", "--odometer-mm-per-count",
       "Millimetres per odometer count, published as odometer_mm (0: not published).", kLive},
      [](auto& c) -> auto& { return settings_of(c).units.odometer_mm_per_count; }, 0, 10000));
  s.push_back(real(
      {"flockbot.units", "wheel_watcher_mm_per_count", "--wheel-watcher-mm-per-count",
       "Millimetres per wheel-watcher count, published as wheel_watcher_mm (0: not published).", kLive},
      [](auto& c) -> auto& { return settings_of(c).units.wheel_watcher_mm_per_count; }, 0, 10000));
  s.push_back(real(
      {"flockbot.units", "wheel_mm_s_per_percent", "--wheel-mm-s-per-percent",
       "A wheel's speed in mm/s at a wheel speed of 1 (of the Flockbot's -100..100), for JSON drive: "
       "the serial protocol's own example makes a step 1 cm/s (0: drive is refused).",
       kLive},
      [](auto& c) -> auto& { return settings_of(c).units.wheel_mm_s_per_percent; }, 0, 1000));
  s.push_back(real(
      {"flockbot.units", "wheel_base_mm", "--wheel-base-mm",
       "The distance between the wheels, for JSON drive's turning and the pose's heading (the simulated "
       "Uno's is 100; `python3 -m flockbridge calibrate` measures it).",
       kLive},
      [](auto& c) -> auto& { return settings_of(c).units.wheel_base_mm; }, 1, 10000));
  s.push_back(real(
      {"flockbot.units", "ir_range_k", "--ir-range-k",
       "The IR sensors' distance law, mm = ir_range_k / (reading - ir_range_offset), for the ranges of "
       "sensor messages (0: not known, ranges are null; `python3 -m flockbridge calibrate` measures it).",
       kLive},
      [](auto& c) -> auto& { return settings_of(c).body.ir_range.k; }, 0, 1e9));
  s.push_back(real(
      {"flockbot.units", "ir_range_offset", "--ir-range-offset",
       "The IR reading that means \"nothing in range\", in the law above.", kLive},
      [](auto& c) -> auto& { return settings_of(c).body.ir_range.offset; }, 0, 65535));
  s.push_back(real(
      {"flockbot.units", "ir_max_mm", "--ir-max-mm", "The farthest IR distance reported; beyond it a range is null.",
       kLive},
      [](auto& c) -> auto& { return settings_of(c).body.ir_range.max_mm; }, 1, 10000));
  s.push_back(real(
      {"flockbot.geometry", "radius_mm", "--radius-mm", "The robot's radius, for hello's geometry (0: not known).",
       kLive},
      [](auto& c) -> auto& { return settings_of(c).body.radius_mm; }, 0, 5000));
  {
    Setting angles = text(
        {"flockbot.geometry", "ir_deg", "--ir-deg",
         "Where IR sensors ir0..ir4 look, in degrees from the front, counter-clockwise: \"90, 45, 0, -45, "
         "-90\" (\"\": not known; the sensors are then named ir0..ir4).",
         kLive},
        [](auto& c) -> auto& { return settings_of(c).ir_deg_text; });
    angles.check = [](const Value& value) -> std::string {
      const auto& given = std::get<std::string>(value);
      return given.empty() || parse_ir_deg(given) ? "" : "five angles in degrees, separated by commas, or \"\"";
    };
    angles.set = [](Config& config, const Value& value) {
      FlockbotSettings& flockbot = settings_of(config);
      flockbot.ir_deg_text = std::get<std::string>(value);
      flockbot.body.ir_deg = parse_ir_deg(flockbot.ir_deg_text).value_or(std::vector<double>{});
    };
    s.push_back(std::move(angles));
  }
  s.push_back(real(
      {"flockbot.geometry", "ir_mount_mm", "--ir-mount-mm",
       "How far the IR sensors sit from the robot's centre (0: not known).", kLive},
      [](auto& c) -> auto& { return settings_of(c).body.ir_mount_mm; }, 0, 5000));

  s.push_back(duration(
      {"flockbot.link", "boot_wait_ms", "--boot-wait-ms",
       "After opening the port, wait this long for the Uno's boot ACK before sending CFG anyway.", kLive},
      [](auto& c) -> auto& { return settings_of(c).link.boot_wait; }, 1, kHour));
  s.push_back(duration(
      {"flockbot.link", "handshake_timeout_ms", "--handshake-timeout-ms", "Wait this long for the ACK to a CFG.",
       kLive},
      [](auto& c) -> auto& { return settings_of(c).link.handshake_timeout; }, 1, kHour));
  s.push_back(whole(
      {"flockbot.link", "handshake_retries", "--handshake-retries",
       "Quick CFG tries before the link is reported down (then one try every handshake_slow_ms).", kLive},
      [](auto& c) -> auto& { return settings_of(c).link.handshake_retries; }, 1, 100));
  s.push_back(duration(
      {"flockbot.link", "handshake_slow_ms", "--handshake-slow-ms",
       "Interval of CFG tries after the quick ones failed.", kLive},
      [](auto& c) -> auto& { return settings_of(c).link.handshake_slow_interval; }, 1, kHour));
  s.push_back(duration(
      {"flockbot.link", "nak_window_ms", "--nak-window-ms",
       "Each command is alone on the line this long; a NAK within it resends the command.", kLive},
      [](auto& c) -> auto& { return settings_of(c).link.nak_window; }, 1, kHour));
  s.push_back(duration(
      {"flockbot.link", "frame_gap_ms", "--frame-gap-ms",
       "A frame from the Uno whose bytes stop coming for this long is abandoned, and the bytes behind its "
       "header are searched again.",
       kLive},
      [](auto& c) -> auto& { return settings_of(c).link.frame_gap; }, 1, kHour));
  s.push_back(whole(
      {"flockbot.link", "nak_retries", "--nak-retries", "Resends of a NAKed command before it fails.", kLive},
      [](auto& c) -> auto& { return settings_of(c).link.nak_retries; }, 0, 20));
  s.push_back(duration(
      {"flockbot.link", "reboot_confirm_ms", "--reboot-confirm-ms",
       "After an ACK that nothing explains, a packet other than ACK within this time shows that "
       "the Uno did not reboot.",
       kLive},
      [](auto& c) -> auto& { return settings_of(c).link.reboot_confirm; }, 1, kHour));
  s.push_back(duration(
      {"flockbot.link", "stale_timeout_ms", "--stale-timeout-ms",
       "Silence from the Uno after which the link is reported stale and CFG is sent again.", kLive},
      [](auto& c) -> auto& { return settings_of(c).link.stale_timeout; }, 1, kHour));
  s.push_back(whole(
      {"flockbot.link", "max_payload", "--max-payload", "Serial frames with a longer LEN are taken for noise.",
       kRestart},
      [](auto& c) -> auto& { return settings_of(c).link.max_payload; }, 29, 255));
  s.push_back(whole(
      {"flockbot.link", "command_queue", "--command-queue", "Commands that may wait for the serial line.", kLive},
      [](auto& c) -> auto& { return settings_of(c).link.max_queued_commands; }, 1, 10000));
  s.push_back(flag(
      {"flockbot.link", "command_ack", "--command-ack",
       "The firmware acknowledges every command: a command not acknowledged within its window is "
       "resent, and fails when no try was acknowledged.",
       kLive},
      [](auto& c) -> auto& { return settings_of(c).link.require_command_ack; }));
  s.push_back(whole(
      {"flockbot.link", "flush_bytes", "--flush-bytes",
       "With command_ack: zero bytes sent after a command window without an answer, to complete a frame "
       "whose damaged LEN holds the Uno's decoder, before the command is resent (0: never).",
       kLive},
      [](auto& c) -> auto& { return settings_of(c).link.flush_bytes; }, 0, 1024));
  constexpr std::string_view kWhose = "the Flockbot's";
  family.renamed = {
      Renamed{"link", "", "flockbot.link", kWhose},
      Renamed{"units", "", "flockbot.units", kWhose},
      Renamed{"robot", "id", "flockbot", kWhose},
      Renamed{"robot", "gripper", "flockbot", kWhose},
      Renamed{"robot", "left_wheel_stop", "flockbot", kWhose},
      Renamed{"robot", "right_wheel_stop", "flockbot", kWhose},
      Renamed{"robot", "servo_model", "flockbot", kWhose},
      Renamed{"robot", "ip", "flockbot", kWhose},
  };
  return family;
}

}  // namespace flockbridge::bridge::flockbot
